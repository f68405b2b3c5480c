# ===- test_partial_masks.py - Warp operations over partial masks -------=== #
#
# frontends/partial_masks.cu: the second stage of a block reduction over the
# lanes that hold a warp's partial (a ballot's mask passed on inside the
# branch, sm_80's __reduce_add_sync for integers), blocks smaller than a warp
# (mask 0xffff), warp-aggregated atomics over __activemask(), half a warp
# behind __syncwarp(0xffff) voting over its lanes, and cooperative groups'
# 16-lane tiles. Compiled by clang-22 at -O1..-O3 during the run; primal
# against a float64 NumPy model, gradient against its derivative, on
# lavapipe under the validation layer. Every lane of the warp runs the
# operations (ConvergeWarps.cpp), lanes outside the mask contribute nothing.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np
import pytest

from frontend_helpers import (check, compile_cuda, f32, needs_cuda_headers,
                              run)

RNG = np.random.default_rng(37)
OPTS = [1, 2, 3]


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("block,grid,n", [(256, 2, 1000), (16, 3, 70)])
def test_block_sum_over_holder_lanes(tmp_path, opt, block, grid, n):
    """out[b] = sum of x^2 over block b's grid-stride elements: the warps'
    partials reduced by the lanes below the warp count (ballot mask), or a
    16-thread block's lanes (mask 0xffff); din = 2 x dout[block of x]."""
    ll = compile_cuda(tmp_path, "partial_masks", opt)
    x = RNG.uniform(-1, 1, n)
    owner = (np.arange(n) // block) % grid
    expected = np.array([np.sum(x[owner == b] ** 2) for b in range(grid)])
    kernel = f"sum_squares_f{block}"
    out = run(tmp_path, ll, kernel, grid, block,
              [f32(x), f32(np.zeros(grid)), f"i32:{n}"])
    check(out[1], expected)
    w = RNG.standard_normal(grid)
    out = run(tmp_path, ll, f"grad_{kernel}", grid, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(grid)), f32(w),
               f"i32:{n}"])
    check(out[1], 2 * x * w[owner])


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("block,grid,n", [(128, 2, 300), (8, 4, 29)])
def test_integer_block_sum_with_reduce_add(tmp_path, opt, arch, block, grid,
                                           n):
    """sm_80's __reduce_add_sync over the holders' mask (128 threads: 4
    lanes) and over an 8-thread block's mask 0xff."""
    ll = compile_cuda(tmp_path, "partial_masks", opt, arch=arch)
    x = RNG.integers(-50, 50, n).astype(np.int32)
    owner = (np.arange(n) // block) % grid
    expected = [int(np.sum(x[owner == b].astype(np.int64) ** 2))
                for b in range(grid)]
    out = run(tmp_path, ll, f"sum_squares_i{block}", grid, block,
              [x, np.zeros(grid, np.int32), f"i32:{n}"])
    assert out[1].tolist() == expected


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("block", [64, 48])
def test_warp_aggregated_atomics_over_activemask(tmp_path, opt, block):
    """Stream compaction: the lanes holding a positive x reserve their slots
    with one atomicAdd per warp over __activemask(); out holds 2x of each
    positive x once (in an order the atomics pick), and d/dx sends each
    slot's cotangent back to the x that filled it."""
    ll = compile_cuda(tmp_path, "partial_masks", opt)
    n = 3 * block - 5
    x = RNG.permutation(n) / n - 0.4  # distinct: a slot names its x
    positive = x > 0
    count = int(positive.sum())
    out = run(tmp_path, ll, "keep_positive_kernel", 3, block,
              [f32(x), f32(np.zeros(n)), np.zeros(1, np.int32), f"i32:{n}"])
    assert out[2][0] == count
    check(np.sort(out[1][:count]), np.sort(2 * x[positive]))
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_keep_positive", 3, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w),
               np.zeros(1, np.int32), f"i32:{n}"])
    slots = out[2][:count]
    expected = np.zeros(n)
    for slot, value in enumerate(slots):
        source = np.argmin(np.abs(2 * x - value))
        expected[source] = 2 * w[slot]
    check(out[1], expected)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_half_warp_sync_and_votes(tmp_path, opt):
    """The low 16 lanes of each warp add their neighbour's x^2 through shared
    memory behind __syncwarp(0xffff), then vote over the same mask whether
    any (all) of them is above 1; the high lanes keep x^2."""
    ll = compile_cuda(tmp_path, "partial_masks", opt)
    n = 64
    x = RNG.uniform(-1.2, 1.2, n)
    x[:16] = RNG.uniform(0.8, 1.0, 16)  # warp 0's low half: every sum > 1
    lane = np.arange(n) % 32
    low = lane < 16
    sq = x ** 2
    y = np.where(low, sq + sq[np.arange(n) ^ 1], sq)
    out = run(tmp_path, ll, "half_warp_pairs_kernel", 1, n,
              [f32(x), f32(np.zeros(n)), np.full(n, -1, np.int32)])
    check(out[1], y)
    for warp in range(2):
        half = y[32 * warp:32 * warp + 16] > 1.0
        votes = out[2][32 * warp:32 * warp + 32]
        assert (votes[:16] == 2 * half.any() + half.all()).all()
        assert (votes[16:] == -1).all()
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_half_warp_pairs", 1, n,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w),
               np.zeros(n, np.int32)])
    partner = np.arange(n) ^ 1
    check(out[1], np.where(low, 2 * x * (w + w[partner]), 2 * x * w))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_cooperative_groups_tile16_reduce(tmp_path, opt):
    """cg::reduce over thread_block_tile<16> (its mask is built from the lane
    id read in assembly): y = x * sum over the tile; 2 blocks of 64."""
    ll = compile_cuda(tmp_path, "partial_masks", opt)
    n = 128
    x = RNG.uniform(-1, 1, n)
    tiles = x.reshape(-1, 16)
    sums = np.repeat(tiles.sum(axis=1), 16)
    out = run(tmp_path, ll, "tile16_scale_kernel", 2, 64,
              [f32(x), f32(np.zeros(n))])
    check(out[1], x * sums)
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_tile16_scale", 2, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w)])
    tile_dot = np.repeat((tiles * w.reshape(-1, 16)).sum(axis=1), 16)
    check(out[1], w * sums + tile_dot)
