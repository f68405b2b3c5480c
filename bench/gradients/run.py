#!/usr/bin/env python3
# ===- run.py - Gradient kernels vs primal kernels, and AD scaling -------=== #
#
# 1. For every kernel of bench/gradients/kernels.mlir (saxpy, the seed,
#    polynomial, 3-point stencil, 16-step loop, branchy), the launch time of
#    the reverse-mode gradient kernel next to the primal kernel on the default
#    device (lavapipe without a GPU), interleaved in one run; medians, their
#    ratio per kernel and the median ratio, and the atomics the generated
#    derivative keeps (from nabla-differentiate's remarks). Goal: median
#    gradient/primal <= 3x, none above 5x, zero atomics where accesses are
#    thread-exclusive.
#    The block-level kernels of test/Integration/gradients/block_kernels.mlir
#    (softmax rows, tiled halo stencil) and collectives.mlir (all_reduce add
#    and max, subgroup_reduce mul, shuffle idx gather, workgroup atomic max;
#    adjoints from nabla.kernel_adjoint) are timed the same way.
# 2. Registers, shared memory and spills of those kernels and their adjoints
#    for sm_90 (ptxas -v), when the CUDA toolkit is present. Goal: workgroup
#    memory <= 2x the primal's, no spills.
# 3. nabla-differentiate's own time (MLIR's --mlir-timing) on synthetic
#    functions of 10^2, 10^3, 10^4 ops, per op. Goal: per-op time flat within
#    2x.
#
# Times are kernel-only, from the device's clock around the dispatch (Vulkan
# timestamp queries; docs/Runtime.md, "Kernel time"): uploads and read-back
# are excluded. Each launch runs its kernel LAUNCH_REPEATS times on the same
# device objects (every repeat from the same inputs) and counts the median of
# the repeats after the first, which holds lavapipe's shader compilation;
# the table shows the median of those over the interleaved launches.
#
# Usage: PYTHONPATH=build/python bench/gradients/run.py [BUILD] [--repeat N]
#        [--n ELEMENTS]
# ===----------------------------------------------------------------------=== #
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, "bench", "gradients", "kernels.mlir")
NAMES = ["saxpy", "seed", "poly", "stencil", "loop", "branchy"]
# Dispatches per launch; the first of each is dropped (see above).
LAUNCH_REPEATS = 3


def kernel_seconds(launched):
    """The kernel time of one `_nabla.launch(..., timing=True)`: the median
    device-measured time of its repeats after the first, in seconds."""
    return statistics.median(launched[2]["kernel_ns"][1:]) * 1e-9


def primal_args(name, n, rng):
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    size = ("index", n)
    if name == "saxpy":
        return [x, y, ("f32", 1.5), size], [0, 1]
    if name in ("seed", "loop"):
        return [x, size], [0]
    return [x, y, size], [0, 1]


def with_shadows(args, dup, rng):
    out = []
    for k, a in enumerate(args):
        out.append(a)
        if k in dup:
            out.append(rng.standard_normal(a.shape).astype(np.float32))
    return out


def deterministic_mode(nabla, _nabla, rows, repeat, rng, subgroup):
    """Prints the deterministic mode's cost (ordered vs atomic kernel adjoint
    of Y = w0 X + w1 on `rows` blocks of 64); returns the medians in seconds
    by kernel and the distinct dW bit patterns of each adjoint."""
    gradients = os.path.join(ROOT, "test", "Integration", "gradients")
    # Deterministic mode: the ordered kernel adjoint of Y = w0 X + w1 against
    # the atomic one (every thread adds into dW[0] and dW[1]), side by side;
    # distinct dW bit patterns over the repeats show what the order buys.
    det = nabla.compile(
        nabla.Module.parse(open(os.path.join(gradients, "deterministic.mlir")).read()),
        "spirv", workgroup_size=[64], subgroup_size=subgroup)
    det_entries = {k["name"]: k for k in det.manifest["kernels"]}
    n = rows * 64
    xs = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(np.float32)
    ws = np.array([0.7, -1.3], np.float32)
    sd = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(np.float32)

    def launch_det(kernel, launch_args):
        packed, shapes, _ = nabla._pack_args(det_entries[kernel], launch_args, {})
        launched = _nabla.launch(det.manifest_text, det.artifacts, kernel, [rows],
                                 [64], packed, shapes, {}, "vulkan", -1, 600,
                                 repeat=LAUNCH_REPEATS, timing=True)
        return kernel_seconds(launched), launched[0]

    scratch = np.zeros(1 + 2 * rows, np.int32)
    common = [xs, np.zeros_like(xs), ws, np.zeros_like(ws), np.zeros_like(xs), sd,
              ("index", n)]
    timings = {"scale": [], "scale_atomic": [], "scale_ordered": []}
    patterns = {"scale_atomic": set(), "scale_ordered": set()}
    for _ in range(repeat):
        timings["scale"].append(launch_det("scale", [xs, ws, np.zeros_like(xs),
                                                     ("index", n)])[0])
        for kernel in patterns:
            t, outs = launch_det(kernel, common + ([scratch] if kernel.endswith("ordered")
                                                   else []))
            timings[kernel].append(t)
            patterns[kernel].add(bytes(outs[3]))
    med = {k: statistics.median(v) for k, v in timings.items()}
    print(f"\ndeterministic mode ({rows} blocks of 64, Y = w0 X + w1, dW from every thread):")
    print(f"{'kernel':<15}{'ms':>9}{'/primal':>9}{'distinct dW':>13}")
    print(f"{'primal':<15}{med['scale'] * 1e3:>9.2f}{1:>9.2f}{'-':>13}")
    for kernel in patterns:
        print(f"{kernel:<15}{med[kernel] * 1e3:>9.2f}{med[kernel] / med['scale']:>9.2f}"
              f"{len(patterns[kernel]):>13}")
    print(f"ordered/atomic adjoint: {med['scale_ordered'] / med['scale_atomic']:.2f}")
    return med, {k: len(v) for k, v in patterns.items()}


def differentiate_scaling(build, repeat, sizes=(100, 1000, 10000)):
    """Prints nabla-differentiate's own time on chains of `sizes` float ops;
    returns [(ops, milliseconds, microseconds per op)]."""
    # nabla-differentiate scaling on a chain of N float ops.
    print()
    print(f"{'ops':>7}{'differentiate ms':>18}{'us/op':>8}")
    per_op, measured = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for ops in sizes:
            lines = ["module {", "  func.func @f(%x: f32) -> f32 {"]
            prev = "%x"
            for k in range(ops):
                op = ("arith.mulf", "math.sin", "arith.addf")[k % 3]
                operands = f"{prev}, %x" if op != "math.sin" else prev
                lines.append(f"    %v{k} = {op} {operands} : f32")
                prev = f"%v{k}"
            lines += [f"    return {prev} : f32", "  }",
                      "  func.func @g(%x: f32, %s: f32) -> f32 {",
                      "    %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>],"
                      " ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32",
                      "    return %d : f32", "  }", "}"]
            path = os.path.join(tmp, f"chain{ops}.mlir")
            open(path, "w").write("\n".join(lines))
            times = []
            for _ in range(max(3, repeat // 3)):
                # The pass's own wall time, from MLIR's timing report.
                report = subprocess.run(
                    [os.path.join(build, "bin", "nabla-opt"), path,
                     "--pass-pipeline=builtin.module(nabla-differentiate)",
                     "--mlir-timing", "--mlir-timing-display=list", "-o", os.devnull],
                    check=True, capture_output=True, text=True).stderr
                line = next(l for l in report.splitlines() if l.strip().endswith("Differentiate"))
                times.append(float(line.split()[0]))
            ms = statistics.median(times) * 1e3
            per_op.append(ms * 1e3 / ops)
            measured.append((ops, ms, per_op[-1]))
            print(f"{ops:>7}{ms:>18.1f}{per_op[-1]:>8.2f}")
    print(f"per-op time max/min over sizes: {max(per_op) / min(per_op):.2f} (goal <= 2)")
    return measured


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--n", type=int, default=1 << 20)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import nabla
    from nabla import _nabla

    rng = np.random.default_rng(0)
    module = nabla.Module.parse(open(KERNELS).read())
    name, _, subgroup = nabla.device("vulkan")
    compiled = nabla.compile(module, "spirv", workgroup_size=[64],
                             subgroup_size=subgroup)
    kernels = {k["name"]: k for k in compiled.manifest["kernels"]}
    grid = (args.n + 63) // 64

    # Atomics kept, per derivative function, from the remarks.
    remarks = subprocess.run(
        [os.path.join(args.build, "bin", "nabla-opt"), KERNELS,
         "--nabla-differentiate=remarks=true", "-o", os.devnull],
        capture_output=True, text=True).stderr
    atomics = {n: 0 for n in NAMES}
    for line in remarks.splitlines():
        if "keeps an atomic" in line:
            number = int(line.split(":")[1])
            # Attribute the remark to the function whose body holds the line.
            owner = None
            for k, text in enumerate(open(KERNELS).read().splitlines(), 1):
                m = re.match(r"\s*(?:func|gpu)\.func @(\w+)", text)
                if m:
                    owner = m.group(1)
                if k == number:
                    break
            if owner in atomics:
                atomics[owner] += 1

    def launch(kernel, launch_args):
        packed, shapes, _ = nabla._pack_args(kernels[kernel], launch_args, {})
        return kernel_seconds(_nabla.launch(
            compiled.manifest_text, compiled.artifacts, kernel, [grid], [64],
            packed, shapes, {}, "vulkan", -1, 600, repeat=LAUNCH_REPEATS,
            timing=True))

    print(f"device: {name}; n = {args.n}; medians of {args.repeat} interleaved launches"
          f" (kernel time, device clock)")
    print(f"{'kernel':<10}{'primal ms':>11}{'gradient ms':>13}{'ratio':>8}{'atomics':>9}")
    ratios = []
    for kernel in NAMES:
        primal, dup = primal_args(kernel, args.n, rng)
        grad = with_shadows(primal, dup, rng)
        p, g = [], []
        for _ in range(args.repeat):
            p.append(launch(kernel + "_primal", primal))
            g.append(launch(kernel + "_grad", grad))
        mp, mg = statistics.median(p), statistics.median(g)
        ratios.append(mg / mp)
        print(f"{kernel:<10}{mp * 1e3:>11.2f}{mg * 1e3:>13.2f}{mg / mp:>8.2f}"
              f"{atomics[kernel]:>9}")
    # Block-level kernels and collectives, whole-kernel adjoints, one block
    # of 64 per row.
    rows = args.n // 64
    gradients = os.path.join(ROOT, "test", "Integration", "gradients")

    def time_adjoints(source, cases):
        compiled_file = nabla.compile(
            nabla.Module.parse(open(os.path.join(gradients, source)).read()),
            "spirv", workgroup_size=[64], subgroup_size=subgroup)
        entries = {k["name"]: k for k in compiled_file.manifest["kernels"]}

        def launch_rows(kernel, launch_args):
            packed, shapes, _ = nabla._pack_args(entries[kernel], launch_args, {})
            return kernel_seconds(_nabla.launch(
                compiled_file.manifest_text, compiled_file.artifacts, kernel,
                [rows], [64], packed, shapes, {}, "vulkan", -1, 600,
                repeat=LAUNCH_REPEATS, timing=True))

        for label, primal_kernel, grad_kernel, primal, grad in cases:
            p, g = [], []
            for _ in range(args.repeat):
                p.append(launch_rows(primal_kernel, primal))
                g.append(launch_rows(grad_kernel, grad))
            mp, mg = statistics.median(p), statistics.median(g)
            ratios.append(mg / mp)
            print(f"{label + '*':<10}{mp * 1e3:>11.2f}{mg * 1e3:>13.2f}{mg / mp:>8.2f}"
                  f"{'-':>9}")

    x = rng.uniform(-1, 1, args.n + 2).astype(np.float32)
    y = np.zeros(args.n, np.float32)
    seeds = rng.standard_normal(args.n).astype(np.float32)
    pair = [x[:args.n], y]
    pair_grad = [x[:args.n], np.zeros_like(y), y, seeds]
    time_adjoints("block_kernels.mlir", [
        ("softmax", "softmax", "softmax_adjoint", pair, pair_grad),
        ("stencil", "stencil", "stencil_adjoint", [x, y],
         [x, np.zeros_like(x), y, seeds])])
    time_adjoints("collectives.mlir", [
        (stem, stem + "_kernel", stem + "_grad", pair, pair_grad)
        for stem in ("allsum", "allmax", "subprod", "gather", "atomicmax")])
    print("(* whole-kernel adjoint from nabla.kernel_adjoint, one block of 64 per row)")
    print(f"median gradient/primal: {statistics.median(ratios):.2f} "
          f"(max {max(ratios):.2f}; goal: median <= 3, none above 5)")

    deterministic_mode(nabla, _nabla, rows, args.repeat, rng, subgroup)

    # Registers and shared memory on sm_90.
    ptxas = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
    if os.path.exists(ptxas):
        print()
        print(f"{'sm_90 kernel':<24}{'registers':>10}{'smem B':>8}{'spills B':>9}")
        with tempfile.TemporaryDirectory() as tmp:
            for source in ("block_kernels.mlir", "parallel.mlir", "collectives.mlir"):
                path = os.path.join(ROOT, "test", "Integration", "gradients", source)
                subprocess.run([os.path.join(args.build, "bin", "nabla-compile"), path,
                                "--target=nvvm", "--chip=sm_90", "-o", tmp], check=True)
                report = subprocess.run([ptxas, "-v", "-arch=sm_90",
                                         os.path.join(tmp, "kernels.ptx"), "-o", os.devnull],
                                        capture_output=True, text=True).stderr
                name = None
                for line in report.splitlines():
                    m = re.search(r"Compiling entry function '(\w+)'", line)
                    if m:
                        name, spills = m.group(1), 0
                    m = re.search(r"(\d+) bytes spill stores", line)
                    if m:
                        spills = int(m.group(1))
                    m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?$", line)
                    if m and name:
                        print(f"{name:<24}{m.group(1):>10}{m.group(2) or '0':>8}{spills:>9}")

    differentiate_scaling(args.build, args.repeat)


if __name__ == "__main__":
    main()
