#!/usr/bin/env python3
# ===- difftest.py - Differential testing of random kernels --------------=== #
#
# Generates N random kernels from seeds SEED .. SEED+N-1 (gen.py), runs each
# on the default Vulkan device through `nabla-run` and on the host through
# upstream mlir-opt/mlir-runner (check.py), and for differentiable kernels
# checks the gradient kernel against finite differences. Prints the outcome
# per kernel class and the time per kernel; exits 1 if any kernel failed.
#
# Each failure is saved under OUT/failures/<seed>/ (kernel.mlir, host.mlir,
# case.json, inputs.npz, both sides' outputs, result.txt), then minimized
# (reduce.py; one minimization per distinct failure signature) into
# OUT/failures/<seed>/min/. With --keep the minimized case also becomes a
# regression test: test/Difftest/regressions/<class>-<seed>/ (replayed by
# test/Integration/test_difftest.py).
#
# Usage: difftest.py [N] [SEED] [--out DIR] [--no-minimize] [--keep]
#                    [--diff-only] [--known-failures] [--quiet]
# ===----------------------------------------------------------------------=== #
import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from check import ROOT, Result, run_case  # noqa: E402
from gen import generate  # noqa: E402
from kernel_ast import (Atomic, Barrier, For, If, from_json, to_json,  # noqa
                        walk)
from reduce import minimize, size_of  # noqa: E402

FAILING = {"mismatch", "grad-mismatch", "tangent-mismatch", "gpu-error",
           "gpu-crash", "gpu-timeout", "ad-error", "ad-crash", "ad-timeout",
           "fwd-error", "fwd-crash", "fwd-timeout", "host-error",
           "tester-error"}
REGRESSIONS = os.path.join(ROOT, "test", "Difftest", "regressions")


def normalized(res):
    """A failure's signature: class, where, and for errors the message
    without locations and SSA names."""
    msg = ""
    if res.cls not in ("mismatch", "grad-mismatch", "tangent-mismatch"):
        m = re.search(r"error: (.*)", res.detail)
        msg = m.group(1) if m else res.detail[:80]
        msg = re.sub(r"%[\w#]+", "%_", msg)
        msg = re.sub(r"\d+", "N", msg)
    return (res.cls, res.info.get("where"), msg)


def gpu_only_for(sig):
    """Errors reproduce without the host run (faster minimization)."""
    if sig[0] in ("gpu-error", "gpu-crash", "gpu-timeout"):
        return "primal"
    if sig[0] in ("ad-error", "ad-crash", "ad-timeout"):
        return "grad"
    if sig[0] in ("fwd-error", "fwd-crash", "fwd-timeout"):
        return "tangent"
    return None


def features(k):
    """Kernel features, for the coverage table."""
    f = set()
    for s in walk(k.body):
        if isinstance(s, For):
            f.add("uniform loop with barriers" if s.phase else "scf.for")
            if s.iters:
                f.add("iter_args across barriers" if s.phase
                      else "iter_args")
        elif isinstance(s, If):
            f.add("scf.if with results" if s.results else "scf.if")
        elif isinstance(s, Atomic):
            f.add("atomic " + ("workgroup" if k.buffer(s.buf).space == "wg"
                               else "global") + f" {s.kind}")
        elif isinstance(s, Barrier):
            f.add("gpu.barrier")
    if k.wg:
        f.add("workgroup memory")
    if k.block[1] > 1 or k.block[2] > 1 or k.grid[1] > 1:
        f.add("2-D/3-D launch")
    if k.blocks > 1:
        f.add("several blocks")
    if k.fty == "f64":
        f.add("f64")
    if k.diff:
        f.add("gradient via nabla." + k.ad_form)
    return f


def save_failure(out, seed, k, res, work):
    d = os.path.join(out, "failures", str(seed))
    if os.path.exists(d):
        shutil.rmtree(d)
    shutil.copytree(work, d)
    with open(os.path.join(d, "result.txt"), "w") as f:
        f.write(f"{res.cls} ({res.info.get('where')})\n{res.detail}\n")
    return d


def keep_regression(seed, k, res, reason):
    name = f"{res.cls}-{seed}"
    d = os.path.join(REGRESSIONS, name)
    os.makedirs(d, exist_ok=True)
    from emit import gpu_module
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(to_json(k), f, indent=1)
    with open(os.path.join(d, "kernel.mlir.txt"), "w") as f:
        f.write(gpu_module(k))
    meta = {"seed": seed, "class": res.cls, "where": res.info.get("where"),
            "detail": res.detail[:1000], "xfail": reason}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return d


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Differential testing of random kernels (GPU vs host).")
    ap.add_argument("n", nargs="?", type=int, default=200)
    ap.add_argument("seed", nargs="?", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "difftest"))
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--keep", action="store_true",
                    help="add minimized failures to test/Difftest/regressions")
    ap.add_argument("--diff-only", action="store_true",
                    help="only differentiable kernels")
    ap.add_argument("--known-failures", action="store_true",
                    help="also generate ops known not to lower on SPIR-V")
    ap.add_argument("--minimize-budget", type=float, default=900,
                    help="seconds per minimization")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--validate", action="store_true",
                    help="launch under the Vulkan validation layer "
                    "(NABLA_VULKAN_VALIDATION=1; a message is a gpu-error)")
    ap.add_argument("--add-regression", metavar="DIR",
                    help="only add the case saved in DIR (e.g. a failure's "
                    "min/ folder) to test/Difftest/regressions and exit")
    ap.add_argument("--reason", default="",
                    help="with --add-regression: why it is expected to fail "
                    "(marks it xfail); empty: expected to pass")
    args = ap.parse_args(argv)

    if args.add_regression:
        with open(os.path.join(args.add_regression, "case.json")) as f:
            k = from_json(json.load(f))
        with tempfile.TemporaryDirectory(prefix="difftest-") as w:
            r = run_case(k, w)
        print(f"replayed: {r.cls}: {r.detail[:300]}")
        print("kept as", keep_regression(k.seed, k, r, args.reason))
        return 0

    if args.validate:
        os.environ["NABLA_VULKAN_VALIDATION"] = "1"
    os.makedirs(args.out, exist_ok=True)
    counts = {}
    feature_counts = {}
    times = []
    failures = []
    seen = {}
    started = time.time()
    log = open(os.path.join(args.out, "log.jsonl"), "a")
    for seed in range(args.seed, args.seed + args.n):
        k = generate(seed, diff=True if args.diff_only else None,
                     known_failures=args.known_failures)
        kind = ("differentiable" if k.diff else "primal") + " " + k.fty
        with tempfile.TemporaryDirectory(prefix="difftest-") as work:
            t = time.time()
            try:
                res = run_case(k, work)
            except Exception as e:  # the tester's own bug: report, go on
                res = Result("tester-error", f"{type(e).__name__}: {e}",
                             where="tester")
            dt = time.time() - t
            times.append(dt)
            cls = res.cls
            if cls == "ok" and res.info.get("hinted"):
                cls = "ok (loops hinted)"
            if cls.startswith("ok") and res.info.get("fwd_unsupported"):
                cls += " (no forward mode)"
            counts.setdefault(kind, {}).setdefault(cls, 0)
            counts[kind][cls] += 1
            for f in features(k):
                feature_counts[f] = feature_counts.get(f, 0) + 1
            log.write(json.dumps({"seed": seed, "kind": kind, "class": res.cls,
                                  "time": round(dt, 3),
                                  "detail": res.detail[:300]}) + "\n")
            log.flush()
            if not args.quiet:
                print(f"seed {seed:6d} {kind:18s} {cls:18s} {dt:5.2f}s"
                      + (f"  {res.detail[:160]}" if res.cls != "ok" else ""),
                      flush=True)
            if res.cls not in FAILING:
                continue
            d = save_failure(args.out, seed, k, res, work)
            sig = normalized(res)
            failures.append((seed, res, d))
            # Errors: one minimization per message; mismatches (which the
            # class alone does not tell apart): up to 3 per run.
            repeat = sig in seen and (
                sig[0] not in ("mismatch", "grad-mismatch",
                               "tangent-mismatch") or len(seen[sig]) >= 3)
            if args.no_minimize or repeat:
                if repeat:
                    print(f"  same failure as seed {seen[sig][0]}: "
                          f"not minimized")
                continue
            seen.setdefault(sig, []).append(seed)
        print(f"  minimizing seed {seed} ({size_of(k)} statements) ...",
              flush=True)

        def interesting(cand, sig=sig):
            with tempfile.TemporaryDirectory(prefix="difftest-min-") as w:
                r = run_case(cand, w, gpu_only=gpu_only_for(sig))
                return normalized(r) == sig

        small = minimize(k, interesting, args.minimize_budget,
                         log=lambda m: print("  " + m, flush=True),
                         races_ok=gpu_only_for(sig) is not None)
        with tempfile.TemporaryDirectory(prefix="difftest-min-") as w:
            r = run_case(small, w)
            shutil.copytree(w, os.path.join(d, "min"))
            with open(os.path.join(d, "min", "result.txt"), "w") as f:
                f.write(f"{r.cls} ({r.info.get('where')})\n{r.detail}\n")
        print(f"  minimized case: {d}/min", flush=True)
        if args.keep:
            kept = keep_regression(seed, small, r, f"{r.cls}: {r.detail[:200]}")
            print(f"  kept as regression {kept}", flush=True)
    log.close()

    total = sum(sum(c.values()) for c in counts.values())
    print(f"\n== {total} kernels (seeds {args.seed}..{args.seed + args.n - 1})"
          f" in {time.time() - started:.0f}s ==")
    for kind in sorted(counts):
        row = ", ".join(f"{c}: {n}" for c, n in sorted(counts[kind].items()))
        print(f"  {kind:18s} {row}")
    if times:
        print(f"  time per kernel: mean {statistics.mean(times):.2f}s, median "
              f"{statistics.median(times):.2f}s, max {max(times):.2f}s")
    print("  features: " + ", ".join(f"{f} {n}" for f, n in
                                     sorted(feature_counts.items())))
    bad = [f for f in failures if f[1].cls in FAILING]
    notes = [f for f in failures if f[1].cls not in FAILING]
    for seed, res, d in notes:
        print(f"  note: seed {seed}: {res.cls}: {res.detail[:200]} ({d})")
    for seed, res, d in bad:
        print(f"  FAILED: seed {seed}: {res.cls} ({res.info.get('where')}): "
              f"{res.detail[:300]} ({d})")
    print(f"  {len(bad)} failing kernels")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
