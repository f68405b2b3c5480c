#!/usr/bin/env python3
# ===- cache_hit.py - nabla-compile from the kernel cache ----------------=== #
#
# Times nabla-compile on a kernel three ways, in a fresh NABLA_CACHE_DIR:
# with --no-cache (the whole pipeline), as a cache hit, and `--version` (the
# process starting, the floor of any run). Kernels: examples/mul_kernel.mlir
# and a generated 2000-op kernel (a third of it sin, so libdevice and ptxas
# have work); targets spirv and nvvm (sm_90, when ptxas exists). Prints
# medians and the load average before and after. Goal: hit <= 50 ms.
#
# Usage: bench/compile_time/cache_hit.py [BUILD_DIR] [--repeat N]
#
# ===----------------------------------------------------------------------=== #
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def big_kernel(ops):
    """`ops` dependent f32 ops, a third of them math.sin."""
    lines = ["module attributes {gpu.container_module} {",
             "  gpu.module @kernels {",
             "    gpu.func @big(%A: memref<?xf32>) kernel {",
             "      %c0 = arith.constant 0 : index",
             "      %x0 = memref.load %A[%c0] : memref<?xf32>",
             "      %k = arith.constant 1.0001 : f32"]
    for i in range(ops):
        op = f"math.sin %x{i}" if i % 3 == 0 else f"arith.mulf %x{i}, %k"
        lines.append(f"      %x{i + 1} = {op} : f32")
    lines += [f"      memref.store %x{ops}, %A[%c0] : memref<?xf32>",
              "      gpu.return", "    }", "  }", "}"]
    return "\n".join(lines) + "\n"


def seconds(cmd, env):
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "nabla-compile")
    print("load average before:", os.getloadavg())
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, NABLA_CACHE_DIR=os.path.join(scratch, "cache"))
        env.pop("NABLA_NO_CACHE", None)
        big = os.path.join(scratch, "big2000.mlir")
        with open(big, "w") as f:
            f.write(big_kernel(2000))
        start = statistics.median(seconds([tool, "--version"], env)
                                 for _ in range(args.repeat))
        print(f"process start (--version): {start * 1e3:.1f} ms")
        targets = [("spirv", ["--block=64"])]
        if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
            targets.append(("nvvm", ["--chip=sm_90"]))
        print(f"{'kernel':12s} {'target':6s} {'compile ms':>11s} {'hit ms':>7s}")
        for name, source in (("mul_kernel", os.path.join(ROOT, "examples", "mul_kernel.mlir")),
                             ("big2000", big)):
            for target, flags in targets:
                cmd = [tool, source, f"--target={target}", *flags, "-o",
                       os.path.join(scratch, "out")]
                compiles = 3 if name == "big2000" else args.repeat
                miss = statistics.median(seconds(cmd + ["--no-cache"], env)
                                         for _ in range(compiles))
                seconds(cmd, env)  # stores the entry
                hit = statistics.median(seconds(cmd, env) for _ in range(args.repeat))
                print(f"{name:12s} {target:6s} {miss * 1e3:11.1f} {hit * 1e3:7.1f}")
    print("load average after:", os.getloadavg())


if __name__ == "__main__":
    main()
