# ===- test_handwritten_adjoints.py - Generated = hand-written adjoints --=== #
#
# The benchmark's anchor (bench/run.py) compares the adjoint kernels Nabla
# generates with adjoints written by hand (bench/handwritten/adjoints.mlir).
# The comparison is of equals only if they compute the same thing: for every
# case of bench/handwritten/cases.py, on small sizes, the generated adjoint
# and the hand-written kernels (run in order on the same buffers) are
# launched on the default device from the same arguments, and every shadow
# must agree to float tolerance. (The primal buffers are not compared: the
# generated adjoint also runs the primal and leaves its outputs written, the
# hand-written one computes the gradient only.)
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration -k handwritten
# ===----------------------------------------------------------------------=== #
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
sys.path.insert(0, os.path.join(ROOT, "bench", "handwritten"))
import cases  # noqa: E402


def run(tmp, source, kernel, grid, block, args):
    """Launches `kernel` of `source`; returns `args` with every buffer
    replaced by its final contents."""
    tmp.mkdir(parents=True, exist_ok=True)
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(tmp / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp / f'in{k}.npy'}")
        else:
            specs.append(f"--arg={arg[0]}:{arg[1]!r}")
    out = tmp / "out"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), source, f"--kernel={kernel}",
         "--grid=" + ",".join(map(str, grid)), "--block=" + ",".join(map(str, block)),
         f"--out={out}"] + specs, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return [np.load(out / f"arg{k}.npy") if isinstance(arg, np.ndarray) else arg
            for k, arg in enumerate(args)]


@pytest.mark.parametrize("case", cases.CASES, ids=[c.name for c in cases.CASES])
def test_handwritten_adjoint_matches_generated(case, tmp_path):
    rng = np.random.default_rng(17)
    _, adjoint = case.arguments(case.test_size, rng)
    grid = case.grid(case.test_size)
    generated = run(tmp_path / "generated", cases.PRIMALS, case.generated, grid,
                    case.block, adjoint)
    handwritten = adjoint
    for k, kernel in enumerate(case.handwritten):
        handwritten = run(tmp_path / f"hand{k}", cases.HANDWRITTEN, kernel, grid,
                          case.block, handwritten)
    # Shadows follow their buffers: the odd positions of the leading buffers.
    buffers = next((k for k, a in enumerate(adjoint) if not isinstance(a, np.ndarray)),
                   len(adjoint))
    for k in range(1, buffers, 2):
        g, h = generated[k], handwritten[k]
        scale = max(1.0, float(np.max(np.abs(g))))
        np.testing.assert_allclose(h, g, rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=f"{case.name}: argument {k}")
    # Not vacuous: the input's shadow changed.
    assert not np.array_equal(generated[1], adjoint[1]), case.name


def test_matmul_without_hint_matches_handwritten(tmp_path):
    """The benchmark's matmul without its tile loop's `nabla.max_trip_count`
    hint: its 16 x 16 workgroup tiles (rank 2) then go to every step's
    snapshot in the global tape, restored step by step (AD.md)."""
    case = next(c for c in cases.CASES if c.name == "matmul")
    hint = "} {nabla.max_trip_count = 16 : i64}"
    text = open(cases.PRIMALS).read()
    assert text.count(hint) == 1
    source = tmp_path / "kernels_without_hint.mlir"
    source.write_text(text.replace(hint, "}"))
    rng = np.random.default_rng(23)
    _, adjoint = case.arguments(case.test_size, rng)
    grid = case.grid(case.test_size)
    generated = run(tmp_path / "generated", str(source), case.generated, grid,
                    case.block, adjoint)
    handwritten = adjoint
    for k, kernel in enumerate(case.handwritten):
        handwritten = run(tmp_path / f"hand{k}", cases.HANDWRITTEN, kernel, grid,
                          case.block, handwritten)
    for k in (1, 3, 5):
        g, h = generated[k], handwritten[k]
        scale = max(1.0, float(np.max(np.abs(g))))
        np.testing.assert_allclose(h, g, rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=f"argument {k}")
    assert not np.array_equal(generated[1], adjoint[1])
