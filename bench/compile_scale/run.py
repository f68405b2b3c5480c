#!/usr/bin/env python3
# ===- bench/compile_scale/run.py - Compile time and memory against size -=== #
#
# Straight-line kernels of N dependent f32 ops (a third math.sin, the rest
# mulf), the primal alone and with its generated adjoint
# (nabla.kernel_adjoint), compiled by nabla-compile for each target: wall
# time and peak resident memory of the whole process (medians over
# --repeat runs, the kernel cache off). Prints, per target, the gradient's
# cost over the primal's and the per-op cost at the largest N over the
# smallest. Not a test: run it by hand on an idle machine.
#
#   bench/compile_scale/run.py [--sizes 500,2000,8000] [--targets nvvm,rocdl,spirv] [--repeat 3]
# ===----------------------------------------------------------------------=== #
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
FLAGS = {"nvvm": ["--chip=sm_80"], "rocdl": [], "spirv": ["--block=1"],
         "metal": ["--block=1"]}


sys.path.insert(0, os.path.join(ROOT, "bench", "compile_time"))
from cache_hit import big_kernel  # noqa: E402  (the same generated kernel)


def kernel(ops, gradient):
    """big_kernel's N ops, with a request for its adjoint when `gradient`."""
    text = big_kernel(ops)
    if gradient:
        text = text.replace(
            "  gpu.module @kernels {\n",
            "  gpu.module @kernels {\n    nabla.kernel_adjoint @big -> "
            "@big_adjoint {activity = [#nabla.activity<dup>]}\n", 1)
    return text


def measure(path, target, out):
    """(seconds, peak MiB) of one nabla-compile."""
    command = ([os.path.join(BIN, "nabla-compile"), path, f"--target={target}",
                "--no-cache", "-o", out] + FLAGS[target])
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(command)} failed: {child.stderr.read()}")
    # ru_maxrss of the child (nabla-compile; ptxas and ld.lld are its
    # children and are not counted: see REPORT.md).
    return seconds, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="500,2000,8000")
    parser.add_argument("--targets", default="nvvm,rocdl,spirv")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    targets = args.targets.split(",")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for n in sizes:
            for gradient in (False, True):
                path = os.path.join(scratch, f"k{n}{'g' if gradient else 'p'}.mlir")
                with open(path, "w") as f:
                    f.write(kernel(n, gradient))
                for target in targets:
                    runs = [measure(path, target,
                                    os.path.join(scratch, f"out{n}{target}"))
                            for _ in range(args.repeat)]
                    results[(n, gradient, target)] = (
                        statistics.median(r[0] for r in runs),
                        statistics.median(r[1] for r in runs))
    print(f"{'N':>6} {'target':>7} {'primal s':>9} {'MiB':>6} "
          f"{'gradient s':>11} {'MiB':>6} {'grad/primal':>12}")
    for n in sizes:
        for target in targets:
            p, pm = results[(n, False, target)]
            g, gm = results[(n, True, target)]
            print(f"{n:>6} {target:>7} {p:>9.2f} {pm:>6.0f} {g:>11.2f} "
                  f"{gm:>6.0f} {g / p:>12.2f}")
    small, large = sizes[0], sizes[-1]
    for target in targets:
        per_small = results[(small, True, target)][0] / small
        per_large = results[(large, True, target)][0] / large
        print(f"{target}: gradient per-op cost at {large} / at {small}: "
              f"{per_large / per_small:.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
