# ===- test_cub_primitives.py - CUB's block and warp primitives -----------=== #
#
# frontends/cub_primitives.cu: cub::BlockReduce (warp-reductions and raking
# algorithms), cub::WarpReduce with a generic operator, cub::BlockScan
# (inclusive float, exclusive int), 64-bit sums (double, unsigned long long)
# from the CUDA toolkit's CCCL headers, whose shuffles are PTX inline
# assembly; compiled by clang-22 at -O1/-O2/-O3 and for sm_70/sm_80/sm_90
# during the run: primal against float64 NumPy, gradients against the
# analytic ones, on lavapipe; every kernel compiles for all four targets.
# ===----------------------------------------------------------------------=== #
import os

import numpy as np
import pytest

from frontend_helpers import (check, compile_cuda, compile_for_target, f32,
                              needs_cuda_headers, run)

RNG = np.random.default_rng(1907)
OPTS = [1, 2, 3]
BLOCK = 128

needs_cub = pytest.mark.skipif(
    not os.path.isfile("/usr/local/cuda/include/cccl/cub/cub.cuh") and
    not os.path.isfile("/usr/local/cuda/include/cub/cub.cuh"),
    reason="CUB's headers come with the CUDA toolkit")


def per_block(values, n, grid, reduce):
    padded = np.zeros(grid * BLOCK)
    padded[:n] = values[:n]
    return np.array([reduce(padded[b * BLOCK:(b + 1) * BLOCK])
                     for b in range(grid)])


@needs_cuda_headers
@needs_cub
@pytest.mark.parametrize("opt,arch", [(1, "sm_80"), (2, "sm_80"),
                                      (3, "sm_80"), (2, "sm_70"),
                                      (2, "sm_90")])
@pytest.mark.parametrize("n,grid", [(300, 3), (128, 1), (1, 1)])
def test_block_reduce(tmp_path, opt, arch, n, grid):
    ll = compile_cuda(tmp_path, "cub_primitives", opt, arch)
    x = RNG.uniform(-1, 1, grid * BLOCK)
    out = run(tmp_path, ll, "block_norm_kernel", grid, BLOCK,
              [f32(x), f32(np.zeros(grid)), f"i32:{n}"])
    check(out[1], per_block(x * x, n, grid, np.sum), rtol=1e-5, atol=1e-5)
    w = RNG.standard_normal(grid)
    expected = np.where(np.arange(x.size) < n,
                        2 * x * w[np.arange(x.size) // BLOCK], 0)
    for kernel in ["grad_block_norm", "grad_block_norm_raking"]:
        out = run(tmp_path, ll, kernel, grid, BLOCK,
                  [f32(x), f32(np.zeros(x.size)), f32(np.zeros(grid)),
                   f32(w), f"i32:{n}"])
        check(out[1], expected, rtol=1e-5, atol=1e-5)


@needs_cuda_headers
@needs_cub
@pytest.mark.parametrize("opt", OPTS)
def test_warp_reduce_max(tmp_path, opt):
    ll = compile_cuda(tmp_path, "cub_primitives", opt)
    grid, n = 2, 200
    x = RNG.uniform(-3, 3, grid * BLOCK)
    warps = grid * BLOCK // 32
    s = np.where(np.arange(x.size) < n, np.sin(x), -2.0)
    out = run(tmp_path, ll, "warp_max_kernel", grid, BLOCK,
              [f32(x), f32(np.zeros(warps)), f"i32:{n}"])
    check(out[1], s.reshape(warps, 32).max(axis=1), rtol=1e-6, atol=1e-6)
    # The gradient reaches the lane holding each warp's maximum.
    w = RNG.standard_normal(warps)
    out = run(tmp_path, ll, "grad_warp_max", grid, BLOCK,
              [f32(x), f32(np.zeros(x.size)), f32(np.zeros(warps)), f32(w),
               f"i32:{n}"])
    expected = np.zeros(x.size)
    for k, lanes in enumerate(s.reshape(warps, 32)):
        j = k * 32 + int(np.argmax(lanes))
        if j < n:
            expected[j] = np.cos(x[j]) * w[k]
    check(out[1], expected, rtol=1e-5, atol=1e-5)


@needs_cuda_headers
@needs_cub
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("n,grid", [(300, 3), (1, 1)])
def test_block_scans(tmp_path, opt, n, grid):
    ll = compile_cuda(tmp_path, "cub_primitives", opt)
    x = RNG.uniform(-1, 1, grid * BLOCK)
    squares = np.where(np.arange(x.size) < n, x * x, 0).reshape(grid, BLOCK)
    out = run(tmp_path, ll, "scan_squares_kernel", grid, BLOCK,
              [f32(x), f32(np.zeros(x.size)), f"i32:{n}"])
    check(out[1][:n], np.cumsum(squares, axis=1).ravel()[:n], rtol=1e-5,
          atol=1e-5)
    # d/dx_i of sum_j w_j y_j: 2 x_i times the sum of w over the block's
    # positions from i on.
    w = RNG.standard_normal(x.size)
    wm = np.where(np.arange(x.size) < n, w, 0).reshape(grid, BLOCK)
    suffix = np.cumsum(wm[:, ::-1], axis=1)[:, ::-1].ravel()
    out = run(tmp_path, ll, "grad_scan_squares", grid, BLOCK,
              [f32(x), f32(np.zeros(x.size)), f32(np.zeros(x.size)), f32(w),
               f"i32:{n}"])
    check(out[1][:n], (2 * x * suffix)[:n], rtol=1e-4, atol=1e-5)
    flags = (np.where(np.arange(x.size) < n, x, 0) > 0).reshape(grid, BLOCK)
    out = run(tmp_path, ll, "compact_offsets", grid, BLOCK,
              [f32(x), np.zeros(x.size, np.int32), f"i32:{n}"])
    exclusive = (np.cumsum(flags, axis=1) - flags).ravel()
    np.testing.assert_array_equal(out[1][:n], exclusive[:n])


@needs_cuda_headers
@needs_cub
@pytest.mark.parametrize("opt", OPTS)
def test_64_bit_sums(tmp_path, opt):
    ll = compile_cuda(tmp_path, "cub_primitives", opt)
    grid, n = 3, 333
    x = RNG.uniform(-1, 1, grid * BLOCK) * 1e3
    out = run(tmp_path, ll, "block_sum_f64", grid, BLOCK,
              [x, np.zeros(grid), np.zeros(grid, np.uint64), f"i32:{n}"])
    np.testing.assert_allclose(out[1], per_block(x, n, grid, np.sum),
                               rtol=1e-12)
    ids = np.arange(grid * BLOCK)
    counts = [sum(int(i + 1) << 31 for i in ids[b * BLOCK:(b + 1) * BLOCK]
                  if i < n) for b in range(grid)]
    np.testing.assert_array_equal(out[2], np.array(counts, np.uint64))


@needs_cuda_headers
@needs_cub
@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv", "metal"])
def test_compiles_for_every_target(tmp_path, target):
    """SPIR-V validated by spirv-val, NVVM assembled by ptxas; Metal has no
    doubles (the 64-bit sums are a located error there)."""
    for opt in OPTS:
        ll = compile_cuda(tmp_path, "cub_primitives", opt)
        result, manifest = compile_for_target(
            ll, target, tmp_path / f"O{opt}-{target}", block=BLOCK)
        if target == "metal":
            assert result.returncode == 1
            assert "uses f64, which the metal target does not support" in \
                result.stderr, result.stderr
            continue
        assert manifest, f"-O{opt}: {result.stderr}"
        assert len(manifest["kernels"]) == 9
