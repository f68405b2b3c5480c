# ===- test_production_bench.py - Production kernels: generated = expert --=== #
#
# bench/production/run.py compares the adjoints Nabla generates for the CUDA
# kernels of bench/production/kernels.cu (layer norm and online softmax one
# warp per row, cross-entropy, GELU through float4, the embedding gather, a
# tiled shared-memory matmul) with the backward kernels an expert writes
# (bench/production/expert.cu). The comparison is of equals only if they
# compute the same thing: for every case of run.py, on small sizes, compiled
# by clang-22 at -O2 and launched by nabla-run on the default device
# (lavapipe, under the validation layer), the primal must match a float64
# NumPy model, and the generated adjoint (grad_<name>, dupnoneed on the
# output; grad_<name>_dup, the output rewritten too) and the expert's kernels
# (run in order on the same buffers) must leave the same shadows (rtol 1e-4).
# The primal buffers are not compared: grad_<name>_dup rewrites the outputs,
# the others leave them as the forward left them.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration -k production_bench
# ===----------------------------------------------------------------------=== #
import importlib.util
import os
import subprocess

import numpy as np
import pytest

from frontend_helpers import ROOT, needs_cuda_headers, run

pytestmark = needs_cuda_headers

_spec = importlib.util.spec_from_file_location(
    "production_bench", os.path.join(ROOT, "bench", "production", "run.py"))
production = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(production)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The .ll of kernels.cu and expert.cu (clang-22 -O2, sm_80)."""
    tmp = tmp_path_factory.mktemp("production")
    lls = {}
    for source in (production.KERNELS, production.EXPERT):
        out = tmp / (os.path.basename(source)[:-3] + ".ll")
        result = subprocess.run(production.clang_command(source, str(out)),
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        lls[os.path.basename(source)] = out
    return lls["kernels.cu"], lls["expert.cu"]


def launch(tmp_path, ll, kernel, grid, block, args):
    """nabla-run of `kernel` (its C++ name); `args` with every buffer replaced
    by its final contents."""
    specs = [a if isinstance(a, np.ndarray) else f"i32:{a}" for a in args]
    out = run(tmp_path, ll, kernel, ",".join(map(str, grid)),
              ",".join(map(str, block)), specs)
    return [out[k] if isinstance(a, np.ndarray) else a for k, a in enumerate(args)]


@pytest.mark.parametrize("case", production.CASES, ids=[c.name for c in production.CASES])
def test_generated_adjoint_matches_expert(case, compiled, tmp_path):
    kernels, expert = compiled
    rng = np.random.default_rng(34)
    primal, adjoint = case.make(case.test_size, rng)
    grids = case.grids(case.test_size)

    forward = launch(tmp_path, kernels, case.primal, grids[case.primal], case.block,
                     primal)
    for k, expected in case.model(primal).items():
        np.testing.assert_allclose(forward[k], expected, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{case.name}: primal output {k}")

    adjoint = case.adjoint_arguments(adjoint, forward)
    theirs = adjoint
    for kernel in case.expert:
        theirs = launch(tmp_path, expert, kernel, grids[kernel], case.block, theirs)
    shadows = _shadow_positions(adjoint)
    for generated_name in (case.generated, case.generated_dup):
        ours = launch(tmp_path, kernels, generated_name, grids[case.generated],
                      case.block, adjoint)
        for k in shadows:
            g, h = ours[k], theirs[k]
            scale = max(1.0, float(np.max(np.abs(g))))
            np.testing.assert_allclose(h, g, rtol=1e-4, atol=1e-5 * scale,
                                       err_msg=f"{case.name}: {generated_name} "
                                       f"against the expert, argument {k}")
    # Not vacuous: every shadow changed (outputs' to zero, inputs' by their
    # gradient), and the output's shadow ends zero.
    for k in shadows:
        assert not np.array_equal(theirs[k], adjoint[k]), f"{case.name}: argument {k}"
    assert not np.any(theirs[1]), case.name


def _shadow_positions(args):
    """Positions of the shadows: grad_<name>'s differentiated buffers come
    each followed by its shadow, from the first argument on; a buffer that is
    not float (token ids, targets) is a constant and has none."""
    positions, k = [], 0
    while k < len(args) and isinstance(args[k], np.ndarray):
        if args[k].dtype == np.float32:
            positions.append(k + 1)
            k += 2
        else:
            k += 1
    return positions
