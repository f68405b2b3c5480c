#!/usr/bin/env python3
# ===- bench/compile_scale/run.py - Compile time and memory against size -=== #
#
# Kernels of N dependent f32 ops (a third math.sin, the rest mulf) in two
# shapes: straight-line, and loop-heavy (N/25 loops one after the other, each
# running 25 of the ops on its carried value a run-time number of times, so
# the adjoint tapes or checkpoints every loop). The primal alone and with its
# generated adjoint (nabla.kernel_adjoint), compiled by nabla-compile for
# each target: wall time and peak resident memory of the whole process
# (medians over --repeat runs, the kernel cache off). Prints, per shape and
# target, the gradient's cost over the primal's and the per-op cost at the
# largest N over the smallest. Not a test: run it by hand on an idle machine.
#
#   bench/compile_scale/run.py [--sizes 500,2000,8000] [--targets nvvm,rocdl,spirv]
#                              [--shapes straight,loops] [--repeat 3] [--chart PNG]
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


LOOP_BODY = 25


def loop_kernel(ops):
    """`ops` dependent f32 ops (a third math.sin) in ops/LOOP_BODY loops one
    after the other, each of LOOP_BODY ops on its carried value, run %n
    times (a kernel parameter)."""
    lines = ["module attributes {gpu.container_module} {",
             "  gpu.module @kernels {",
             "    gpu.func @big(%A: memref<?xf32>, %n: index) kernel {",
             "      %c0 = arith.constant 0 : index",
             "      %c1 = arith.constant 1 : index",
             "      %y0 = memref.load %A[%c0] : memref<?xf32>",
             "      %k = arith.constant 1.0001 : f32"]
    loops = max(1, ops // LOOP_BODY)
    for l in range(loops):
        lines.append(f"      %y{l + 1} = scf.for %i{l} = %c0 to %n step %c1 "
                     f"iter_args(%x{l}_0 = %y{l}) -> (f32) {{")
        for i in range(LOOP_BODY):
            op = (f"math.sin %x{l}_{i}" if i % 3 == 0
                  else f"arith.mulf %x{l}_{i}, %k")
            lines.append(f"        %x{l}_{i + 1} = {op} : f32")
        lines += [f"        scf.yield %x{l}_{LOOP_BODY} : f32", "      }"]
    lines += [f"      memref.store %y{loops}, %A[%c0] : memref<?xf32>",
              "      gpu.return", "    }", "  }", "}"]
    return "\n".join(lines) + "\n"


def kernel(ops, gradient, shape):
    """The shape's N ops, with a request for its adjoint when `gradient`."""
    if shape == "straight":
        text, activity = big_kernel(ops), "[#nabla.activity<dup>]"
    else:
        text = loop_kernel(ops)
        activity = "[#nabla.activity<dup>, #nabla.activity<const>]"
    if gradient:
        text = text.replace(
            "  gpu.module @kernels {\n",
            "  gpu.module @kernels {\n    nabla.kernel_adjoint @big -> "
            f"@big_adjoint {{activity = {activity}}}\n", 1)
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
    parser.add_argument("--shapes", default="straight,loops")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chart", help="write time against N per target here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    targets = args.targets.split(",")
    shapes = args.shapes.split(",")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for shape in shapes:
            for n in sizes:
                for gradient in (False, True):
                    path = os.path.join(
                        scratch, f"{shape}{n}{'g' if gradient else 'p'}.mlir")
                    with open(path, "w") as f:
                        f.write(kernel(n, gradient, shape))
                    for target in targets:
                        out = os.path.join(scratch, f"out{shape}{n}{target}")
                        runs = [measure(path, target, out)
                                for _ in range(args.repeat)]
                        results[(shape, n, gradient, target)] = (
                            statistics.median(r[0] for r in runs),
                            statistics.median(r[1] for r in runs))
    print(f"{'shape':>8} {'N':>6} {'target':>7} {'primal s':>9} {'MiB':>6} "
          f"{'gradient s':>11} {'MiB':>6} {'grad/primal':>12}")
    for shape in shapes:
        for n in sizes:
            for target in targets:
                p, pm = results[(shape, n, False, target)]
                g, gm = results[(shape, n, True, target)]
                print(f"{shape:>8} {n:>6} {target:>7} {p:>9.2f} {pm:>6.0f} "
                      f"{g:>11.2f} {gm:>6.0f} {g / p:>12.2f}")
    small, large = sizes[0], sizes[-1]
    for shape in shapes:
        for target in targets:
            per_small = results[(shape, small, True, target)][0] / small
            per_large = results[(shape, large, True, target)][0] / large
            print(f"{shape} {target}: gradient per-op cost at {large} / at "
                  f"{small}: {per_large / per_small:.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.chart:
        chart(args.chart, results, sizes, targets, shapes)


def chart(path, results, sizes, targets, shapes):
    """Compile seconds against N, one panel per shape: each target's primal
    (dashed) and gradient (solid), log-log."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, len(shapes), figsize=(5 * len(shapes), 4),
                                squeeze=False)
    for axis, shape in zip(axes[0], shapes):
        for index, target in enumerate(targets):
            for gradient, style in ((False, "--"), (True, "-")):
                line = [results[(shape, n, gradient, target)][0] for n in sizes]
                axis.plot(sizes, line, style, marker="o", color=f"C{index}",
                          label=f"{target} {'gradient' if gradient else 'primal'}")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("ops (N)")
        axis.set_ylabel("nabla-compile seconds")
        axis.set_title(f"{shape} kernels")
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
