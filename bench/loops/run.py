#!/usr/bin/env python3
# ===- run.py - Loop gradients: strategies, recomputation, memory --------=== #
#
# For a loop of N iterations per thread (N from a kernel parameter, inside the
# bounds check: `if (i < n) for k < N: a = 0.5 a + 0.4 x a / (1 + a^2)`):
#
# 1. Kernel time of the reverse-mode gradient next to the primal on the
#    default device (lavapipe without a GPU), interleaved in one run, for
#    N in {1, 10, 100, 1000, 10000}, per strategy: binomial checkpointing
#    with 8 and 16 snapshots, and a tape (nabla.max_trip_count = 100, so
#    only for N <= 100; a larger hint would exceed the default tape-budget
#    and the cost model would checkpoint the loop instead). Medians and
#    gradient/primal ratios. Times are kernel-only, from the device's clock
#    around the dispatch (docs/Runtime.md, "Kernel time"): each launch runs
#    its kernel LAUNCH_REPEATS times from the same inputs and counts the
#    median of the repeats after the first (which holds lavapipe's shader
#    compilation).
# 2. The forward steps the emitted checkpointing schedule recomputes (the
#    same splitting rule simulated here) against revolve's optimum
#    r*N - C(K+r+1, r-1) for K snapshots. Goal: within 1.5x at N = 10^4 with
#    K <= 16.
# 3. Private bytes per thread, registers and spills of each gradient kernel
#    for sm_90 (ptxas -v), when the CUDA toolkit is present. Goal: no spills,
#    memory independent of N.
#
# Usage: PYTHONPATH=build/python bench/loops/run.py [BUILD] [--repeat N]
#        [--threads T]
# ===----------------------------------------------------------------------=== #
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STRATEGIES = {  # name -> loop attribute
    "ckpt8": "{nabla.checkpoints = 8 : i64}",
    "ckpt16": "{nabla.checkpoints = 16 : i64}",
    "tape100": "{nabla.max_trip_count = 100 : i64}",
}
# Dispatches per launch; the first of each is dropped (see above).
LAUNCH_REPEATS = 3


def kernels():
    """The primal and one gradient kernel per strategy, in one module."""
    text = ["module attributes {gpu.container_module} {", "  gpu.module @kernels {"]
    for name, attribute in STRATEGIES.items():
        text.append(f"""    func.func @{name}(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index, %m: index) {{
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {{
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f32
        %k = arith.constant 0.4 : f32
        %one = arith.constant 1.0 : f32
        %x = memref.load %X[%i] : memref<?xf32>
        %r = scf.for %j = %c0 to %m step %c1 iter_args(%a = %x) -> (f32) {{
          %q = arith.mulf %a, %a : f32
          %p = arith.addf %q, %one : f32
          %s = arith.divf %a, %p : f32
          %t = arith.mulf %s, %x : f32
          %u = arith.mulf %t, %k : f32
          %h = arith.mulf %a, %half : f32
          %v = arith.addf %h, %u : f32
          scf.yield %v : f32
        }} {attribute}
        memref.store %r, %Y[%i] : memref<?xf32>
      }}
      return
    }}
    gpu.func @{name}_primal(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index, %m: index) kernel {{
      func.call @{name}(%X, %Y, %n, %m) : (memref<?xf32>, memref<?xf32>, index, index) -> ()
      gpu.return
    }}
    gpu.func @{name}_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index, %m: index) kernel {{
      nabla.autodiff @{name}(%X, %dX, %Y, %dY, %n, %m)
          {{activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []}} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index, index) -> ()
      gpu.return
    }}""")
    text += ["  }", "}"]
    return "\n".join(text)


def snapshot_offset(n, free):
    """The split of LoopCheckpointing.cpp's emitSnapshotOffset."""
    r, beta = 0, 1
    while beta < n:
        r += 1
        beta = beta * (free + r) // r
    right = beta * free // (free + r)
    return max(n - right, 1)


def schedule_steps(n, snapshots):
    """Forward steps recomputed by the emitted schedule (advances only)."""
    positions, steps, end = [0], 0, n
    while end > 0:
        position, target = positions[-1], end - 1
        while position < target:
            free = snapshots - len(positions)
            nxt = position + snapshot_offset(end - position, free) if free > 0 else target
            steps += nxt - position
            position = nxt
            if free > 0:
                positions.append(nxt)
        end = target
        if positions[-1] == end and len(positions) > 1:
            positions.pop()
    return steps


def revolve_optimum(n, snapshots):
    """Griewank's minimal forward steps r*n - C(s + r + 1, r - 1)."""
    r = 0
    while math.comb(snapshots + r, r) < n:
        r += 1
    return r * n - math.comb(snapshots + r + 1, r - 1) if r > 0 else 0


def ptxas_report(build, source, tmp):
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not os.path.exists(ptxas):
        return {}
    out = os.path.join(tmp, "nvvm")
    subprocess.run([os.path.join(build, "bin", "nabla-compile"), source,
                    "--target=nvvm", "--chip=sm_90", "-o", out], check=True,
                   capture_output=True)
    text = subprocess.run([ptxas, "-v", "-arch=sm_90",
                           os.path.join(out, "kernels.ptx"), "-o", os.devnull],
                          capture_output=True, text=True).stderr
    report = {}
    for m in re.finditer(r"Function properties for (\w+)\n\s+(\d+) bytes stack frame, "
                         r"(\d+) bytes spill stores.*\n.*Used (\d+) registers", text):
        report[m.group(1)] = (int(m.group(2)), int(m.group(3)), int(m.group(4)))
    return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1024)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import nabla
    from nabla import _nabla

    source_text = kernels()
    tmp = tempfile.mkdtemp()
    source = os.path.join(tmp, "loops.mlir")
    open(source, "w").write(source_text)
    module = nabla.Module.parse(source_text)
    name, _, subgroup = nabla.device("vulkan")
    compiled = nabla.compile(module, "spirv", workgroup_size=[64],
                             subgroup_size=subgroup)
    manifest = {k["name"]: k for k in compiled.manifest["kernels"]}
    n = args.threads
    grid = (n + 63) // 64
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, n).astype(np.float32)
    Y = np.zeros(n, np.float32)
    W = rng.standard_normal(n).astype(np.float32)

    def launch(kernel, launch_args):
        packed, shapes, _ = nabla._pack_args(manifest[kernel], launch_args, {})
        launched = _nabla.launch(compiled.manifest_text, compiled.artifacts,
                                 kernel, [grid], [64], packed, shapes, {},
                                 "vulkan", -1, 600, repeat=LAUNCH_REPEATS,
                                 timing=True)
        return statistics.median(launched[2]["kernel_ns"][1:]) * 1e-9

    print(f"device: {name}; {n} threads; medians of {args.repeat} interleaved launches")
    print("1. kernel time, gradient / primal (device clock, transfers excluded)")
    print(f"{'N':>6}{'primal ms':>11}" + "".join(f"{s + ' ms':>12}{'ratio':>7}" for s in STRATEGIES))
    for trips in (1, 10, 100, 1000, 10000):
        times = {s: [] for s in ["primal"] + list(STRATEGIES)}
        size = [("index", n), ("index", trips)]
        for _ in range(args.repeat):
            times["primal"].append(launch("ckpt8_primal", [X, Y] + size))
            for s in STRATEGIES:
                if s.startswith("tape") and trips > 100:
                    continue
                times[s].append(launch(f"{s}_grad", [X, W.copy(), Y, W.copy()] + size))
        primal = statistics.median(times["primal"])
        row = f"{trips:>6}{primal * 1e3:>11.2f}"
        for s in STRATEGIES:
            if times[s]:
                g = statistics.median(times[s])
                row += f"{g * 1e3:>12.2f}{g / primal:>7.2f}"
            else:
                row += f"{'-':>12}{'-':>7}"
        print(row)

    print("2. recomputed forward steps: emitted schedule vs revolve's optimum")
    print(f"{'N':>6}{'K':>4}{'schedule':>10}{'+ sweep':>9}{'revolve':>9}{'ratio':>7}")
    for trips in (10, 100, 1000, 10000):
        for k in (8, 16):
            ours = schedule_steps(trips, k)
            best = revolve_optimum(trips, k)
            total = ours + trips  # the forward sweep of the primal loop
            print(f"{trips:>6}{k:>4}{ours:>10}{total:>9}{best:>9}"
                  f"{total / max(best, 1):>7.2f}")

    print("3. sm_90 (ptxas -v): private bytes per thread, spills, registers")
    report = ptxas_report(args.build, source, tmp)
    if not report:
        print("   (no CUDA toolkit)")
    for kernel in ["ckpt8_primal"] + [f"{s}_grad" for s in STRATEGIES]:
        if kernel in report:
            stack, spill, regs = report[kernel]
            print(f"   {kernel:<16} stack {stack:>5} B  spills {spill:>3} B  registers {regs:>3}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
