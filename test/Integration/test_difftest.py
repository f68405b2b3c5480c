# ===- test_difftest.py - Replay differential-testing regressions -------=== #
#
# Every minimized case under test/Difftest/regressions/ (a kernel that once
# failed the differential test, scripts/difftest.sh) runs again on the
# default device against its host execution through upstream mlir-runner,
# and, for differentiable kernels, its generated gradient against finite
# differences; a case whose meta.json has "xfail" is a known open bug. Then
# a short smoke of random kernels (fixed seeds; NABLA_DIFFTEST_SEED moves
# them) checks that the generator, both executions and the comparison still
# agree. See docs/Reliability.md.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest \
#        test/Integration/test_difftest.py
# ===----------------------------------------------------------------------=== #
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "Difftest"))

from check import run_case  # noqa: E402
from gen import generate  # noqa: E402
from kernel_ast import from_json  # noqa: E402

REGRESSIONS = os.path.join(ROOT, "test", "Difftest", "regressions")
SMOKE_SEED = int(os.environ.get("NABLA_DIFFTEST_SEED", "900000"))
SMOKE_KERNELS = 8


def regression_cases():
    cases = []
    if not os.path.isdir(REGRESSIONS):
        return cases
    for name in sorted(os.listdir(REGRESSIONS)):
        meta_path = os.path.join(REGRESSIONS, name, "meta.json")
        if not os.path.exists(meta_path):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        marks = []
        if meta.get("xfail"):
            marks.append(pytest.mark.xfail(reason=meta["xfail"], strict=False))
        cases.append(pytest.param(name, marks=marks, id=name))
    return cases


@pytest.mark.parametrize("name", regression_cases())
def test_regression(name, tmp_path):
    with open(os.path.join(REGRESSIONS, name, "case.json")) as f:
        kernel = from_json(json.load(f))
    with open(os.path.join(REGRESSIONS, name, "meta.json")) as f:
        # A case that became a documented limit expects its located error.
        expect = json.load(f).get("expect", "ok")
    result = run_case(kernel, str(tmp_path))
    assert result.cls == expect, f"{result.cls}: {result.detail}"


@pytest.mark.parametrize("seed", range(SMOKE_SEED, SMOKE_SEED + SMOKE_KERNELS))
def test_random_kernel(seed, tmp_path):
    # Every other kernel is differentiable: the gradient path runs too.
    kernel = generate(seed, diff=seed % 2 == 0, size="small")
    result = run_case(kernel, str(tmp_path))
    assert result.cls == "ok", f"seed {seed}: {result.cls}: {result.detail}"


def test_catches_zero_trip_loop_miscompile(tmp_path):
    # The tester itself: with a past SPIR-V miscompile simulated on the GPU
    # side only (a zero-trip scf.for yields 0 instead of its init values),
    # random kernels must show mismatches.
    from reduce import inject_zero_trip_bug
    caught = []
    for seed in range(SMOKE_SEED, SMOKE_SEED + 40):
        kernel = generate(seed, diff=False)
        if inject_zero_trip_bug(kernel) is None:
            continue
        result = run_case(kernel, str(tmp_path / str(seed)),
                          inject=inject_zero_trip_bug)
        assert result.cls in ("ok", "mismatch"), result.detail
        if result.cls == "mismatch":
            caught.append(seed)
            if len(caught) == 2:
                break
    assert len(caught) == 2, f"simulated miscompile caught only in {caught}"
