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


def tree_winners(values, keep_first, first_is_own):
    """The position each final value of a halving max/min tree comes from,
    per position: merges `if (t < s) W[t] = f(W[t], W[t + s])` with f
    keeping its first operand when keep_first(first, second)."""
    W = list(values)
    winner = list(range(len(W)))
    s = len(W) // 2
    while s > 0:
        for t in range(s):
            own, partner = (W[t], winner[t]), (W[t + s], winner[t + s])
            first, second = (own, partner) if first_is_own else (partner, own)
            W[t], winner[t] = first if keep_first(first[0], second[0]) else second
        s //= 2
    return winner


def tree_reach(size):
    """The positions a halving sum tree over `size` threads adds into the
    root (not every one when size is not a power of two)."""
    parts = [{p} for p in range(size)]
    s = size // 2
    while s > 0:
        for t in range(s):
            parts[t] = parts[t] | parts[t + s]
        s //= 2
    return sorted(parts[0])


def block_extrema_vjp(x, dout, blocks, block):
    """dx of grad_block_extrema: each block's max/min tree winners (float32
    comparisons as the kernel's, ties to fmaxf's first operand)."""
    n = len(x)
    v = np.zeros(blocks * block, np.float32)
    v[:n] = x
    dx = np.zeros(blocks * block)
    for b in range(blocks):
        row = v[b * block:(b + 1) * block]
        wmax = tree_winners(row, lambda a, c: a >= c, True)
        wmin = tree_winners(row * row, lambda a, c: a <= c, False)
        hi, lo = float(row[wmax[0]]), float(row[wmin[0]] ** 2)
        d0, d1, d2 = dout[3 * b:3 * b + 3]
        g = dx[b * block:(b + 1) * block]
        reach = tree_reach(block)
        g[wmax[0]] += d0 * lo + d2 * float(np.sum(row[reach].astype(np.float64)))
        g[wmin[0]] += d0 * hi * 2 * float(row[wmin[0]])
        if block > 1:
            g[wmax[1]] += d1
        g[reach] += d2 * hi
    return dx[:n]


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("block", [1, 5, 64, 256])
@pytest.mark.parametrize("ties", [False, True])
def test_max_and_min_trees_in_shared_memory(tmp_path, opt, block, ties):
    """fmaxf/fminf halving trees over blockDim.x (reversed by each
    position's winner, tracked by the forward sweep): the root and a
    partial result read after the max tree, the min tree's first operand
    the partner, the tile then reused by a sum tree; partial last block,
    one thread, ties resolved as the derivative rule does (fmaxf's first
    operand wins a tie)."""
    ll = compile_cuda(tmp_path, "loop_buffers", opt)
    blocks = 3
    n = max(1, blocks * block - 3)
    x = (RNG.choice([-1.0, -0.5, 0.5, 1.0], n) if ties
         else RNG.uniform(-1, 1, n)).astype(np.float32)
    dout = RNG.standard_normal(3 * blocks)
    out = run(tmp_path, ll, "grad_block_extrema", blocks, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(3 * blocks)), f32(dout),
               f"i32:{n}"])
    check(out[1], block_extrema_vjp(x, dout, blocks, block))


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
