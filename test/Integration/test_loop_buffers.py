# Loops with run-time trip counts that overwrite buffers they read
# (frontends/loop_buffers.cu, and the tiled matmul of test_llm_kernels.py):
# the AD checkpoints them with the buffers in the snapshots. Gradients of
# clang-22's IR at -O1/-O2/-O3 against closed forms or central finite
# differences on the default device, at edge trip counts.
import numpy as np
import pytest

from frontend_helpers import (check, compile_cuda, f32, finite_differences,
                              needs_cuda_headers, run)

RNG = np.random.default_rng(31)
OPTS = [1, 2, 3]

pytestmark = needs_cuda_headers


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("block", [1, 64, 256])
def test_tree_reduction_in_shared_memory(tmp_path, opt, block):
    """for (s = blockDim.x / 2; s > 0; s >>= 1) partial[t] += partial[t + s]:
    zero steps (one thread), 6 and 8; partial last block."""
    ll = compile_cuda(tmp_path, "loop_buffers", opt)
    blocks = 3
    n = max(1, blocks * block - 5)
    x = RNG.uniform(-1, 1, n)
    dtotals = RNG.standard_normal(blocks)
    out = run(tmp_path, ll, "grad_block_sum_of_squares", blocks, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(blocks)), f32(dtotals),
               f"i32:{n}"])
    check(out[1], 2 * x * dtotals[np.arange(n) // block])


def halving_model(x, m):
    rows = x.reshape(-1, 8).copy()
    total = np.zeros(len(rows))
    for j in range(m):
        total += rows[:, j % 8] ** 2
        rows[:, j % 8] *= 0.5
    return (rows * total[:, None]).ravel()


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("m", [0, 1, 7, 30])
def test_local_row_updated_in_place(tmp_path, opt, m):
    """A local array read and halved in place by a loop of run-time length
    (more steps than snapshots at m = 30)."""
    ll = compile_cuda(tmp_path, "loop_buffers", opt)
    n = 10
    x = RNG.uniform(-1, 1, 8 * n)
    dy = RNG.standard_normal(8 * n)
    out = run(tmp_path, ll, "grad_halving_row", 1, 16,
              [f32(x), f32(np.zeros(8 * n)), f32(np.zeros(8 * n)), f32(dy),
               f"i32:{m}", f"i32:{n}"])
    (dx,) = finite_differences(lambda v: [halving_model(v[0], m)], [x], [dy])
    check(out[1], dx)
