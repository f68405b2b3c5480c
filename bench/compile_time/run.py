#!/usr/bin/env python3
# ===- run.py - nabla-to-nvvm vs upstream gpu-lower-to-nvvm-pipeline -----=== #
#
# For every primal kernel of the test corpus, times `nabla-opt` running
# `nabla-to-nvvm` (PTX only, as upstream produces) next to `mlir-opt` running
# upstream's `gpu-lower-to-nvvm-pipeline` on the same input, interleaved in
# one run, and prints the median wall time of each and their ratio per
# kernel, then the median ratio. Goal: median ratio <= 1.2.
#
# Usage: bench/compile_time/run.py [BUILD_DIR] [--repeat N] [--chip sm_80]
#
# ===----------------------------------------------------------------------=== #
import argparse
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PTX = {"sm_80": "+ptx70", "sm_90": "+ptx78"}


def timed(cmd, env):
    start = time.perf_counter()
    result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    return elapsed if result.returncode == 0 else None


def compare(build, repeat, chip):
    """Prints, per corpus kernel, the median wall times of nabla-to-nvvm and
    upstream's pipeline and their ratio; returns the median ratio."""
    nabla_opt = os.path.join(build, "bin", "nabla-opt")
    mlir_opt = "/usr/lib/llvm-22/bin/mlir-opt"
    corpus = os.path.join(ROOT, "test", "Integration", "corpus")
    env = dict(os.environ, CUDA_HOME=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    ours = ["--pass-pipeline=builtin.module(nabla-to-nvvm{chip=%s cubin=false})" % chip]
    theirs = ["--gpu-lower-to-nvvm-pipeline=cubin-chip=%s cubin-features=%s cubin-format=isa"
              % (chip, PTX[chip])]

    print(f"{'kernel':<22}{'nabla-to-nvvm ms':>18}{'upstream ms':>14}{'ratio':>8}")
    ratios = []
    for name in sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        a, b = [], []
        for _ in range(repeat):
            a.append(timed([nabla_opt, path] + ours, env))
            b.append(timed([mlir_opt, path] + theirs, env))
        if None in a:
            # A negative corpus case (e.g. the v2 shape without a record,
            # which nabla-validate rejects by design).
            print(f"{name:<22}{'rejected':>18}{'-':>14}{'-':>8}")
            continue
        ma = statistics.median(a)
        if None in b:
            # Upstream cannot lower this kernel (e.g. float subgroup_reduce).
            print(f"{name:<22}{ma * 1e3:>18.1f}{'fails':>14}{'-':>8}")
            continue
        mb = statistics.median(b)
        ratios.append(ma / mb)
        print(f"{name:<22}{ma * 1e3:>18.1f}{mb * 1e3:>14.1f}{ma / mb:>8.2f}")
    print(f"median ratio over {len(ratios)} kernels: {statistics.median(ratios):.2f} (goal <= 1.2)")
    return statistics.median(ratios)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--chip", default="sm_80", choices=sorted(PTX))
    args = parser.parse_args()

    compare(args.build, args.repeat, args.chip)


if __name__ == "__main__":
    main()
