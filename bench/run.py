#!/usr/bin/env python3
# ===- run.py - Kernel-only performance: primal, generated, hand-written --=== #
#
# The one benchmark run of the performance issue. For every kernel of
# bench/handwritten/cases.py (saxpy, polynomial, 3-point stencil, histogram,
# runtime-bounded loop, block sum, softmax and layer-norm rows, tiled matmul):
#
# 1. Kernel-only times of the primal, the adjoint Nabla generates and the
#    adjoint written by hand, side by side on the default device (lavapipe
#    without a GPU): each launch runs its kernel LAUNCH_REPEATS times from the
#    same inputs on the device's clock (docs/Runtime.md, "Kernel time") and
#    counts the median of the repeats after the first (which holds lavapipe's
#    shader compilation); the three are launched interleaved, round after
#    round, and the table shows the medians over the rounds. A hand-written
#    adjoint of several kernels (stencil, matmul) counts the sum of theirs.
#    Ratios: generated / primal, generated / hand-written.
# 2. Static sm_90 figures of all three from ptxas -v on Nabla's PTX
#    (registers, shared memory, stack frame = local memory, spills) and the
#    atomics left in each kernel's PTX. Static: no GPU runs here.
# 3. The loop cost curve over the trip count N: the runtime-bounded loop's
#    primal, its generated adjoint as Nabla chooses by default (the Jacobian
#    preaccumulated in forward mode), by checkpointing and by a tape
#    (bench/loops' kernels with nabla.checkpoints = 8 and the hint
#    nabla.max_trip_count = 100), and the hand-written one.
# 4. Reused from the other benchmarks: the deterministic mode's cost
#    (bench/gradients), compile time against upstream's
#    gpu-lower-to-nvvm-pipeline (bench/compile_time), nabla-differentiate's
#    scaling (bench/gradients).
# 5. PNG charts (matplotlib) into --charts: ratio bars per kernel, the loop
#    cost curve, differentiate scaling.
# It ends with one line for scripts:
#   summary: grad/primal median A max B; generated/hand-written median C max D; registers grad/primal max E
#
# Usage: PYTHONPATH=build/python nice -n 10 bench/run.py [BUILD] [--repeat N]
#        [--charts DIR] [--quick]
# ===----------------------------------------------------------------------=== #
import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
# Dispatches per launch; the first of each is dropped (see above).
LAUNCH_REPEATS = 3
# Trip counts of the loop cost curve, threads per launch.
LOOP_TRIPS = (1, 10, 100, 1000)
LOOP_THREADS = 1024


def load(relative, name):
    """Imports bench/<relative> as module `name` (the benchmarks' scripts all
    share the file name run.py)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, relative))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cases = load(os.path.join("handwritten", "cases.py"), "handwritten_cases")


class Launcher:
    """Kernel-only time of one launch, one nabla.Kernel per kernel name."""

    def __init__(self, nabla, source):
        self.nabla = nabla
        self.module = nabla.Module.parse(open(source).read())
        self.kernels = {}

    def seconds(self, name, args, grid, block):
        if name not in self.kernels:
            self.kernels[name] = self.nabla.Kernel(self.module, name)
        _, times = self.kernels[name](*args, grid=grid, block=block,
                                     repeat=LAUNCH_REPEATS, times=True)
        return statistics.median(times.kernel_ns[1:]) * 1e-9


def kernel_times(nabla, repeat, quick):
    """Section 1: {case name: (primal, generated, hand-written) seconds}."""
    primals = Launcher(nabla, cases.PRIMALS)
    hands = Launcher(nabla, cases.HANDWRITTEN)
    rng = np.random.default_rng(0)
    measured = {}
    for case in cases.CASES:
        size = case.test_size if quick else case.bench_size
        primal, adjoint = case.arguments(size, rng)
        grid = case.grid(size)
        p, g, h = [], [], []
        for _ in range(repeat):
            p.append(primals.seconds(case.primal, primal, grid, case.block))
            g.append(primals.seconds(case.generated, adjoint, grid, case.block))
            h.append(sum(hands.seconds(k, adjoint, grid, case.block)
                         for k in case.handwritten))
        measured[case.name] = tuple(statistics.median(v) for v in (p, g, h))
    return measured


def ptxas_figures(build, source, tmp):
    """{entry: dict(registers, smem, stack, spills, atomics)} for sm_90."""
    ptxas = shutil.which("ptxas") or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
    if not os.path.exists(ptxas):
        return {}
    out = os.path.join(tmp, os.path.basename(source) + ".nvvm")
    subprocess.run([os.path.join(build, "bin", "nabla-compile"), source,
                    "--target=nvvm", "--chip=sm_90", "-o", out], check=True,
                   capture_output=True)
    ptx_file = next(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".ptx"))
    report = subprocess.run([ptxas, "-v", "-arch=sm_90", ptx_file, "-o", os.devnull],
                            capture_output=True, text=True, check=True).stderr
    figures = {}
    for m in re.finditer(r"Function properties for (\w+)\n\s+(\d+) bytes stack frame, "
                         r"(\d+) bytes spill stores, (\d+) bytes spill loads\n"
                         r".*Used (\d+) registers(?:.*?(\d+) bytes smem)?", report):
        figures[m.group(1)] = {"stack": int(m.group(2)),
                               "spills": int(m.group(3)) + int(m.group(4)),
                               "registers": int(m.group(5)),
                               "smem": int(m.group(6) or 0), "atomics": 0}
    # Atomic instructions (atom.*, red.*) in each entry's PTX body.
    ptx = open(ptx_file).read()
    for m in re.finditer(r"\.entry (\w+)\((.*?)(?=\n\.visible|\n\.entry|\Z)", ptx, re.S):
        if m.group(1) in figures:
            figures[m.group(1)]["atomics"] = len(re.findall(r"^\s*(?:@%p\d+\s+)?(?:atom|red)\.",
                                                            m.group(2), re.M))
    return figures


def combined(figures, kernels):
    """The figures of a sequence of kernels: maxima, spills and atomics summed."""
    rows = [figures[k] for k in kernels if k in figures]
    if not rows:
        return None
    return {"registers": max(r["registers"] for r in rows),
            "smem": max(r["smem"] for r in rows),
            "stack": max(r["stack"] for r in rows),
            "spills": sum(r["spills"] for r in rows),
            "atomics": sum(r["atomics"] for r in rows)}


def loop_curve(nabla, loops, repeat):
    """Section 3: {series: [seconds per trip count]} for the loop kernel."""
    primals = Launcher.__new__(Launcher)
    primals.nabla, primals.kernels = nabla, {}
    primals.module = nabla.Module.parse(loops.kernels())
    defaults = Launcher(nabla, cases.PRIMALS)
    hands = Launcher(nabla, cases.HANDWRITTEN)
    rng = np.random.default_rng(1)
    n = LOOP_THREADS
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = np.zeros(n, np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    grid, block = ((n + 63) // 64,), (64,)
    series = {"primal": [], "generated (default)": [], "checkpointing (generated)": [],
              "tape (generated)": [], "hand-written": []}
    for trips in LOOP_TRIPS:
        size = [("index", n), ("index", trips)]
        adjoint = [x, w, y, w] + size
        t = {k: [] for k in series}
        for _ in range(repeat):
            t["primal"].append(primals.seconds("ckpt8_primal", [x, y] + size, grid, block))
            t["generated (default)"].append(
                defaults.seconds("rloop_grad", adjoint, grid, block))
            t["checkpointing (generated)"].append(
                primals.seconds("ckpt8_grad", adjoint, grid, block))
            if trips <= 100:  # the tape's hint
                t["tape (generated)"].append(
                    primals.seconds("tape100_grad", adjoint, grid, block))
            t["hand-written"].append(hands.seconds("rloop_adj", adjoint, grid, block))
        for k in series:
            series[k].append(statistics.median(t[k]) if t[k] else None)
    return series


def charts(directory, rows, curve, scaling):
    """Section 5: the three PNG charts; returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(directory, exist_ok=True)
    paths = []
    names = [r["label"] for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(9, 4.2))
    bars = [("generated / primal", [r["gen"] / r["primal"] for r in rows], "#d95f02"),
            ("hand-written / primal", [r["hand"] / r["primal"] for r in rows], "#1b9e77"),
            ("generated / hand-written", [r["gen"] / r["hand"] for r in rows], "#7570b3")]
    for k, (label, values, color) in enumerate(bars):
        ax.bar(x + (k - 1) * 0.27, values, 0.27, label=label, color=color)
    ax.set_yscale("log")
    ax.axhline(1, color="black", linewidth=0.8)
    for level, style in ((1.2, ":"), (3, "--"), (5, "-.")):
        ax.axhline(level, color="grey", linewidth=0.8, linestyle=style)
    ax.set_xticks(x, names, rotation=20)
    ax.set_ylabel("kernel-time ratio (log)")
    ax.set_title("Adjoint kernel time ratios (lavapipe, kernel only; goals 1.2, 3, 5 dotted)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(os.path.join(directory, "ratios.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for label, values in curve.items():
        points = [(n, v / p) for n, v, p in zip(LOOP_TRIPS, values, curve["primal"]) if v]
        if label != "primal" and points:
            ax.plot(*zip(*points), marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("trip count N (a kernel parameter)")
    ax.set_ylabel("adjoint time / primal time")
    ax.set_title(f"Runtime-bounded loop, {LOOP_THREADS} threads (lavapipe)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(os.path.join(directory, "loop_curve.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ops = [s[0] for s in scaling]
    ax.plot(ops, [s[1] for s in scaling], marker="o", label="nabla-differentiate ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ops in the differentiated function")
    ax.set_ylabel("pass time (ms)")
    twin = ax.twinx()
    twin.plot(ops, [s[2] for s in scaling], marker="s", color="#d95f02", label="us per op")
    twin.set_ylabel("microseconds per op")
    twin.set_ylim(bottom=0)
    ax.set_title("nabla-differentiate scaling (reverse mode, op chains)")
    fig.legend(loc="upper left", bbox_to_anchor=(0.12, 0.88), fontsize=8)
    fig.tight_layout()
    paths.append(os.path.join(directory, "differentiate_scaling.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=7,
                        help="interleaved rounds per kernel (medians over them)")
    parser.add_argument("--charts", default=os.path.join(BENCH, "charts"))
    parser.add_argument("--quick", action="store_true",
                        help="the test sizes and short side benchmarks (a smoke run)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import nabla
    from nabla import _nabla

    gradients = load(os.path.join("gradients", "run.py"), "bench_gradients")
    compile_time = load(os.path.join("compile_time", "run.py"), "bench_compile_time")
    loops = load(os.path.join("loops", "run.py"), "bench_loops")

    device, _, subgroup = nabla.device("vulkan")
    times = kernel_times(nabla, args.repeat, args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        figures = ptxas_figures(args.build, cases.PRIMALS, tmp)
        figures.update(ptxas_figures(args.build, cases.HANDWRITTEN, tmp))

    print(f"device: {device}; kernel-only times (device clock), medians of {args.repeat} "
          f"interleaved rounds")
    print("1. primal, generated and hand-written adjoints")
    print(f"{'kernel':<11}{'size':>14}{'primal ms':>11}{'generated':>11}{'hand ms':>10}"
          f"{'gen/primal':>11}{'gen/hand':>9}{'hand/primal':>12}")
    rows = []
    for case in cases.CASES:
        p, g, h = times[case.name]
        size = case.test_size if args.quick else case.bench_size
        size = "x".join(map(str, size)) if isinstance(size, tuple) else str(size)
        rows.append({"name": case.name, "label": case.label, "primal": p, "gen": g,
                     "hand": h, "case": case})
        print(f"{case.label:<11}{size:>14}{p * 1e3:>11.3f}{g * 1e3:>11.3f}{h * 1e3:>10.3f}"
              f"{g / p:>11.2f}{g / h:>9.2f}{h / p:>12.2f}")
    print("   sizes: elements; loop(m): threads x trip count; blocksum/softmax/layernorm: "
          "blocks of 64; matmul: n (n x n)")
    print("   hand-written stencil and matmul: the sum of their kernels "
          "(gather + zero; dA + dB + zero)")

    print("\n2. sm_90 (ptxas -v, static: no GPU ran): registers, shared memory B, "
          "stack (local memory) B, spills B, atomic instructions; primal / generated / hand")
    print(f"{'kernel':<11}{'registers':>14}{'smem B':>18}{'stack B':>16}{'spills':>10}"
          f"{'atomics':>10}{'gen/primal regs':>17}")
    register_ratios = []
    for row in rows:
        case = row["case"]
        three = [figures.get(case.primal), figures.get(case.generated),
                 combined(figures, case.handwritten)]
        if None in three:
            print(f"{case.label:<11}   (no ptxas figures)")
            continue
        row["figures"] = three
        register_ratios.append(three[1]["registers"] / three[0]["registers"])

        def joined(key, entries=three):
            return "/".join(str(f[key]) for f in entries)
        print(f"{case.label:<11}{joined('registers'):>14}{joined('smem'):>18}"
              f"{joined('stack'):>16}{joined('spills', three[1:]):>10}"
              f"{joined('atomics'):>10}{register_ratios[-1]:>17.2f}")

    print(f"\n3. loop cost over the trip count N ({LOOP_THREADS} threads; ms and /primal)")
    curve = loop_curve(nabla, loops, max(3, args.repeat // 2))
    print(f"{'N':>6}" + "".join(f"{k[:22]:>24}" for k in curve))
    for j, trips in enumerate(LOOP_TRIPS):
        line = f"{trips:>6}"
        for k, values in curve.items():
            v = values[j]
            line += f"{'-':>24}" if v is None else \
                f"{v * 1e3:>14.3f} ({v / curve['primal'][j]:>6.1f}x)"
        print(line)

    print("\n4. deterministic mode (bench/gradients)", end="")
    gradients.deterministic_mode(nabla, _nabla, 256 if args.quick else 4096,
                                 max(3, args.repeat // 2), np.random.default_rng(2),
                                 subgroup)
    print("\n5. compile time: nabla-to-nvvm vs gpu-lower-to-nvvm-pipeline, sm_90 "
          "(bench/compile_time)")
    compile_time.compare(args.build, 1 if args.quick else 3, "sm_90")
    print("\n6. nabla-differentiate scaling (bench/gradients)", end="")
    scaling = gradients.differentiate_scaling(args.build, 3)

    paths = charts(args.charts, rows, curve, scaling)
    print("\ncharts: " + ", ".join(os.path.relpath(p, ROOT) for p in paths))

    over_primal = [r["gen"] / r["primal"] for r in rows]
    over_hand = [r["gen"] / r["hand"] for r in rows]
    print(f"summary: grad/primal median {statistics.median(over_primal):.2f} "
          f"max {max(over_primal):.2f}; generated/hand-written median "
          f"{statistics.median(over_hand):.2f} max {max(over_hand):.2f}; "
          f"registers grad/primal max "
          f"{max(register_ratios) if register_ratios else float('nan'):.2f}")


if __name__ == "__main__":
    main()
