# ===- test_warp_idioms.py - Warp-level CUDA in production idioms -------=== #
#
# Warp shuffles and votes the way production CUDA writes them: floats
# shuffled as integer bits, broadcasts from one lane (online softmax's
# running maximum), doubles shuffled as two halves, structs field by field,
# cooperative groups' warp reductions, votes and sm_80's redux. Compiled by
# clang-22 at -O1..-O3 (and for several chips) during the run; the primal
# against a float64 NumPy model, the gradient (Enzyme's semantics) against
# central finite differences, on lavapipe under the validation layer. The
# files also compile for every target (test_production_idioms.py, which
# these tests were split from).
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np
import pytest

from frontend_helpers import (check, compile_cuda, f32, finite_differences,
                              needs_cuda_headers, run)

RNG = np.random.default_rng(31)
OPTS = [1, 2, 3]


def f64(x):
    return np.asarray(x, dtype=np.float64)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("arch", ["sm_70", "sm_80", "sm_90"])
def test_float_shuffled_as_int(tmp_path, opt, arch):
    """y[i] = 2 * (x[i ^ 1])^2 through __shfl_xor_sync of the float's bits:
    dx = 4 x w[i ^ 1] (dx was 0 before)."""
    ll = compile_cuda(tmp_path, "float_bits", opt, arch=arch)
    n = 32
    x = RNG.uniform(-1, 1, n)
    partner = np.arange(n) ^ 1
    out = run(tmp_path, ll, "shuffle_bits_kernel", 1, n,
              [f32(x), f32(np.zeros(n))])
    check(out[1], 2 * x[partner] ** 2)
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_shuffle_bits", 1, n,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w)])
    check(out[1], 4 * x * w[partner])


def shuffle_broadcast_model(x, source, width):
    """y = x * x[source lane of the thread's segment of `width` threads]."""
    segments = x.reshape(-1, width)
    return (segments * segments[:, source:source + 1]).reshape(-1)


@needs_cuda_headers
@pytest.mark.parametrize("opt", [1, 2])
@pytest.mark.parametrize("block", [32, 64])
@pytest.mark.parametrize("kernel,source,width", [
    ("scale_by_lane0", 0, 32), ("scale_by_segment_lane3", 3, 16)])
def test_broadcast_shuffle(tmp_path, opt, block, kernel, source, width):
    """`__shfl_sync(mask, v, src, width)`: the source lane gathers every
    reader's adjoint, counted within the segment (before the fix, lanes 8, 16
    and 24 of an 8-lane subgroup device got lane 0's adjoint too)."""
    ll = compile_cuda(tmp_path, "shuffle_broadcast", opt)
    grid = 2
    n = grid * block
    x = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, kernel + "_kernel", grid, block,
              [f32(x), f32(np.zeros(n))])
    check(out[1], shuffle_broadcast_model(x, source, width))
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_" + kernel, grid, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w)])
    (dx,) = finite_differences(
        lambda v: [shuffle_broadcast_model(v[0], source, width)], [x], [w])
    check(out[1], dx)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_double_shuffled_as_halves(tmp_path, opt):
    """__shfl_down_sync on a double (two 32-bit shuffles in CUDA's
    headers): y[i] = x[i]^2 + x[i + 1]^2, lane 31 twice its own."""
    ll = compile_cuda(tmp_path, "float_bits_f64", opt)
    n = 32
    x = RNG.uniform(-1, 1, n)

    def model(v):
        sq = v[0] ** 2
        return [sq + np.append(sq[1:], sq[-1])]

    out = run(tmp_path, ll, "shuffle_double_kernel", 1, n,
              [f64(x), f64(np.zeros(n))])
    check(out[1], model([x])[0], rtol=1e-12, atol=1e-12)
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_shuffle_double", 1, n,
              [f64(x), f64(np.zeros(n)), f64(np.zeros(n)), f64(w)])
    (dx,) = finite_differences(model, [x], [w])
    check(out[1], dx, rtol=1e-7, atol=1e-8)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_struct_shuffled_field_by_field(tmp_path, opt):
    """An arg-max warp reduction of {value, index} shuffled field by field
    (the value as its bits): y = x - max(x), the max's cotangent on the
    arg-max lane."""
    ll = compile_cuda(tmp_path, "float_bits", opt)
    n = 32
    x = RNG.permutation(n) / n - 0.5  # distinct values: one arg-max
    out = run(tmp_path, ll, "shift_by_max_kernel", 1, n,
              [f32(x), f32(np.zeros(n)), np.zeros(1, np.int32)])
    check(out[1], x - x.max())
    assert out[2][0] == np.argmax(x)
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_shift_by_max", 1, n,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w),
               np.zeros(1, np.int32)])
    expected = w.copy()
    expected[np.argmax(x)] -= w.sum()
    check(out[1], expected)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_cooperative_groups_warp_reduce(tmp_path, opt):
    """cg::reduce over a thread_block_tile<32> (its thread_block reads a
    reserved shared-memory offset in assembly, unused) of fmodf(x, 1.5) x,
    read with __ldcg; 2 blocks of 64."""
    ll = compile_cuda(tmp_path, "cache_hints", opt)
    n = 128
    x = RNG.uniform(-4, 4, n)

    def model(v):
        return [(np.fmod(v[0], 1.5) * v[0]).reshape(-1, 32).sum(axis=1)]

    out = run(tmp_path, ll, "warp_sums_kernel", 2, 64,
              [f32(x), f32(np.zeros(n // 32))])
    check(out[1], model([x])[0])
    w = RNG.standard_normal(n // 32)
    out = run(tmp_path, ll, "grad_warp_sums", 2, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n // 32)), f32(w)])
    # d/dx fmod(x, 1.5) x = x + fmod(x, 1.5) away from the jumps.
    check(out[1], (x + np.fmod(x, 1.5)) * np.repeat(w, 32))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_warp_votes_and_reductions(tmp_path, opt):
    """__ballot_sync + __popc, __any_sync, __all_sync, __reduce_add_sync and
    __reduce_max_sync over full warps (butterflies of 32-wide shuffles on
    every target), 2 blocks of 64, and the gradient they shape."""
    ll = compile_cuda(tmp_path, "warp_votes", opt)
    n = 128
    x = RNG.uniform(-2, 2, n)
    x[32:64] = RNG.uniform(-1, 1, 32)  # a warp with nothing above 1.5
    x[64] = 2.7  # a warp not all below 2.5
    warps = x.reshape(-1, 32)
    positive = (warps > 0).sum(axis=1)
    any_big = (warps > 1.5).any(axis=1)
    all_small = (np.abs(warps) < 2.5).all(axis=1)
    lane_max = (np.arange(n) % 7).reshape(-1, 32).max(axis=1)

    def model(v):
        w = v[0].reshape(-1, 32)
        y = (w * positive[:, None] + np.where(any_big[:, None], w * w, 0)
             + all_small[:, None])
        return [y.ravel()]

    out = run(tmp_path, ll, "vote_scale_kernel", 2, 64,
              [f32(x), f32(np.zeros(n)), np.zeros(n // 32, np.int32)])
    check(out[1], model([x])[0])
    np.testing.assert_array_equal(
        out[2], positive + 1000 * sum(range(32)) + 1000000 * lane_max)
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_vote_scale", 2, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w),
               np.zeros(n // 32, np.int32)])
    expected = (np.repeat(positive, 32)
                + np.where(np.repeat(any_big, 32), 2 * x, 0)) * w
    check(out[1], expected)

