# ===- test_reduction_trees.py - Block sum trees reversed as broadcasts ---=== #
#
# gradients/reduction_trees.mlir: a block's sum tree in workgroup memory
# whose root alone is read after it is reversed as a broadcast of the root's
# adjoint (ReductionTree.cpp); one that also reads another element keeps the
# step-by-step reversal; frontends/block_reduce.cu is CUDA's own idiom (a
# run-time first stride, blockDim.x / 2, in dynamic or static shared memory,
# compiled by clang-22 at -O1..-O3). All are checked against the tree's
# linear map,
# simulated in NumPy for the launch's block size: blocks narrower than the
# tree (48, 16, 8, 1 threads for 64 elements) leave elements without a path
# to the root, wider ones (128) have idle threads. Also: the primal, the
# remark naming the strategy, and that the broadcast's adjoint kernel keeps
# no tape and no atomics on the tree.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import re
import subprocess

import numpy as np
import pytest

from frontend_helpers import (check, compile_cuda, f32, needs_cuda_headers,
                              run as run_cuda)
from gradient_helpers import BIN, KERNELS, RNG, launch

SOURCE = "reduction_trees.mlir"
BLOCKS = 3


def tree_rows(threads):
    """Rows 0 and 1 of the tree's linear map over 64 elements with
    `threads` threads: W[0] and W[1] after the tree, as weights of X."""
    m = np.eye(64)
    for s in (32, 16, 8, 4, 2, 1):
        for t in range(min(s, threads)):
            m[t] = m[t] + m[t + s]
    return m[0], m[1]


def run(tmp_path, kernel, threads, args):
    return launch(tmp_path / f"{kernel}-{threads}", SOURCE, kernel, BLOCKS,
                  threads, args)


@pytest.mark.parametrize("threads", [64, 48, 16, 8, 1, 128])
@pytest.mark.parametrize("kernel", ["tree_root_adjoint", "tree_root_adjoint_noneed"])
def test_root_only_tree_broadcasts_the_root_adjoint(tmp_path, kernel, threads):
    X = RNG.uniform(-1, 1, 64 * BLOCKS).astype(np.float32)
    dOut = RNG.standard_normal(BLOCKS).astype(np.float32)
    root, _ = tree_rows(threads)
    x = X.astype(np.float64).reshape(BLOCKS, 64)
    r = x @ root
    out = run(tmp_path, "tree_root", threads, [X, np.zeros(BLOCKS, np.float32)])
    np.testing.assert_allclose(out[1], r * r, rtol=1e-5, atol=1e-6)
    got = run(tmp_path, kernel, threads,
              [X, np.zeros_like(X), np.zeros(BLOCKS, np.float32), dOut.copy()])
    expected = (2 * r * dOut)[:, None] * root[None, :]
    np.testing.assert_allclose(got[1].reshape(BLOCKS, 64), expected, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(got[3], 0)
    if kernel.endswith("noneed"):
        return
    np.testing.assert_allclose(got[2], r * r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("threads", [64, 16, 1])
def test_tree_read_beyond_its_root_keeps_the_stepwise_reversal(tmp_path, threads):
    X = RNG.uniform(-1, 1, 64 * BLOCKS).astype(np.float32)
    dOut = RNG.standard_normal(BLOCKS).astype(np.float32)
    root, leaf = tree_rows(threads)
    x = X.astype(np.float64).reshape(BLOCKS, 64)
    got = run(tmp_path, "tree_and_leaf_adjoint", threads,
              [X, np.zeros_like(X), np.zeros(BLOCKS, np.float32), dOut.copy()])
    expected = dOut[:, None] * ((x @ leaf)[:, None] * root[None, :] +
                                (x @ root)[:, None] * leaf[None, :])
    np.testing.assert_allclose(got[1].reshape(BLOCKS, 64), expected, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("threads", [64, 16])
def test_linear_tree_adjoint_without_outputs(tmp_path, threads):
    X = RNG.uniform(-1, 1, 64 * BLOCKS).astype(np.float32)
    dOut = RNG.standard_normal(BLOCKS).astype(np.float32)
    root, _ = tree_rows(threads)
    got = run(tmp_path, "tree_linear_adjoint", threads,
              [X, np.zeros_like(X), np.zeros(BLOCKS, np.float32), dOut.copy()])
    np.testing.assert_allclose(got[1].reshape(BLOCKS, 64),
                               2 * dOut[:, None] * root[None, :], rtol=1e-6)
    np.testing.assert_array_equal(got[2], 0)  # dupnoneed: not computed


def test_remarks_name_the_strategy_and_the_broadcast_keeps_no_tape(tmp_path):
    result = subprocess.run(
        [os.path.join(BIN, "nabla-opt"), os.path.join(KERNELS, SOURCE),
         "--nabla-differentiate=remarks=true", "--canonicalize"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("loop reversed as a reduction: a sum tree of 64 "
                               "elements") == 3, result.stderr
    assert "loop reversed with a tape of 6 slots" in result.stderr
    # The linear tree's adjoint with Out dupnoneed needs no primal value of
    # the tree: the forward sweep's tree is gone (no store into the tile, only
    # its shadow), and its per-level barriers with it.
    text = result.stdout
    start = text.index("func.func private @__nabla_vjp___nabla_kernel_tree_linear_dn")
    body = text[start:text.index("\n    }\n", start)]
    # Parameters: X, dX, Out, dOut, the tile (%arg4) and its shadow.
    assert "memref<64xf32" in body.splitlines()[0].split("%arg4:")[1]
    assert not re.search(r"memref\.store [^\n]*, %arg4\[", body), body
    assert body.count("gpu.barrier") <= 3, body


def cuda_tree_root(threads):
    """The root's weights over a block of `threads` elements for CUDA's
    `for (s = blockDim.x / 2; s > 0; s >>= 1) if (tid < s) ...`."""
    m = np.eye(threads)
    s = threads // 2
    while s > 0:
        for t in range(s):
            m[t] = m[t] + m[t + s]
        s //= 2
    return m[0]


@needs_cuda_headers
@pytest.mark.parametrize("opt", [1, 2, 3])
@pytest.mark.parametrize("threads", [64, 256, 48, 1])
def test_cuda_block_reduce_with_runtime_strides(tmp_path, opt, threads):
    """The samples' block reduction (first stride blockDim.x / 2, a do-while
    after clang) in dynamic and static shared memory: reversed as a
    broadcast (the remark), gradients against the tree's linear map; 48
    threads leave elements off the root's paths (24, 12, 6, 3, 1)."""
    ll = compile_cuda(tmp_path, "block_reduce", opt)
    result = subprocess.run(
        [os.path.join(BIN, "nabla-opt"), str(ll), "--nabla-raise-llvm",
         "--nabla-differentiate=remarks=true", "-o", os.devnull],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("loop reversed as a reduction") == 3, result.stderr
    blocks, n = 3, 3 * threads - threads // 2  # the last block partly past n
    x = RNG.uniform(-1, 1, blocks * threads)
    x[n:] = 0
    root = cuda_tree_root(threads)
    rows = x.reshape(blocks, threads)
    dout = RNG.standard_normal(blocks)
    shared = [f"--dynamic-shared-memory={4 * threads}"]
    out = run_cuda(tmp_path, ll, "reduce_dynamic_kernel", blocks, threads,
                   [f32(x), f32(np.zeros(blocks)), f"i32:{n}"], shared)
    check(out[1], rows @ root)
    out = run_cuda(tmp_path, ll, "grad_reduce_dynamic", blocks, threads,
                   [f32(x), f32(np.zeros_like(x)), f32(np.zeros(blocks)),
                    f32(dout), f"i32:{n}"], shared)
    expected = (dout[:, None] * root[None, :]).reshape(-1)
    expected[n:] = 0
    check(out[1], expected)
    check(out[3], np.zeros(blocks))
    sums = (rows * rows) @ root
    out = run_cuda(tmp_path, ll, "reduce_static_kernel", blocks, threads,
                   [f32(x), f32(np.zeros(blocks)), f"i32:{n}"])
    check(out[1], sums * sums)
    out = run_cuda(tmp_path, ll, "grad_reduce_static", blocks, threads,
                   [f32(x), f32(np.zeros_like(x)), f32(np.zeros(blocks)),
                    f32(dout), f"i32:{n}"])
    expected = (4 * (dout * sums)[:, None] * root[None, :] * rows).reshape(-1)
    check(out[1], expected)


@needs_cuda_headers
@pytest.mark.parametrize("opt", [1, 2])
@pytest.mark.parametrize("threads", [64, 32])
def test_cuda_row_mean_barrier_first(tmp_path, opt, threads):
    """llm.c's mean kernel: a block-strided row sum, then a tree whose steps
    start with the barrier, the block size a parameter; mean = sum / C."""
    ll = compile_cuda(tmp_path, "block_reduce", opt)
    rows, C = 3, 100
    x = RNG.uniform(-1, 1, rows * C)
    dmean = RNG.standard_normal(rows)
    shared = [f"--dynamic-shared-memory={4 * threads}"]
    out = run_cuda(tmp_path, ll, "mean_rows_kernel", rows, threads,
                   [f32(np.zeros(rows)), f32(x), f"i32:{C}", f"i32:{threads}"],
                   shared)
    check(out[0], x.reshape(rows, C).mean(axis=1))
    out = run_cuda(tmp_path, ll, "grad_mean_rows", rows, threads,
                   [f32(np.zeros(rows)), f32(dmean), f32(x), f32(np.zeros_like(x)),
                    f"i32:{C}", f"i32:{threads}"], shared)
    check(out[3], np.repeat(dmean / C, C))
    check(out[1], np.zeros(rows))


def softmax_rows(x):
    y = np.exp(x - x.max(axis=1, keepdims=True))
    return y / y.sum(axis=1, keepdims=True)


@needs_cuda_headers
@pytest.mark.parametrize("opt", [1, 2, 3])
@pytest.mark.parametrize("threads", [64, 32, 128])
def test_cuda_softmax_rows_two_trees_one_buffer(tmp_path, opt, threads):
    """llm.c's softmax_forward_kernel2: a max tree then a sum tree in one
    shared buffer, steps opening with the barrier, the row normalized in
    place; 128 threads for 70 columns leave threads with -inf and 0 leaves.
    Before the fix the sum tree's broadcast read the root's adjoint while
    thread 0 was already taking it away: threads past the first subgroup
    got a partial seed (no error, gradients off by up to 0.02)."""
    ll = compile_cuda(tmp_path, "row_trees", opt)
    rows, C = 3, 70
    x = RNG.standard_normal((rows, C))
    w = RNG.standard_normal((rows, C))
    shared = [f"--dynamic-shared-memory={4 * threads}"]
    out = run_cuda(tmp_path, ll, "softmax_kernel", rows, threads,
                   [f32(np.zeros(rows * C)), f32(x.reshape(-1)), f"i32:{rows}", f"i32:{C}"],
                   shared)
    y = softmax_rows(x)
    check(out[0], y.reshape(-1))
    out = run_cuda(tmp_path, ll, "grad_softmax", rows, threads,
                   [f32(np.zeros(rows * C)), f32(w.reshape(-1)), f32(x.reshape(-1)),
                    f32(np.zeros(rows * C)), f"i32:{rows}", f"i32:{C}"],
                   shared)
    expected = y * (w - (w * y).sum(axis=1, keepdims=True))
    check(out[3], expected.reshape(-1), rtol=1e-3, atol=1e-6)


@needs_cuda_headers
@pytest.mark.parametrize("opt", [1, 2])
@pytest.mark.parametrize("threads", [64, 256])
def test_cuda_max_tree_adjoint_to_one_winner(tmp_path, opt, threads):
    """out = x - max(row) through a shared-memory max tree (reversed step by
    step from a private tape): d/dx = w minus the row's sum of w at the one
    element the tree picked, also when the maximum is tied (rows 1 and 2
    hold it twice): the tied elements share it exactly once."""
    ll = compile_cuda(tmp_path, "row_trees", opt)
    rows, C = 3, 70
    x = RNG.standard_normal((rows, C))
    x[1, [5, 40]] = x[1].max() + 1.0
    x[2, [0, 69]] = x[2].max() + 0.5
    w = RNG.standard_normal((rows, C))
    shared = [f"--dynamic-shared-memory={4 * threads}"]
    out = run_cuda(tmp_path, ll, "shift_kernel", rows, threads,
                   [f32(np.zeros(rows * C)), f32(x.reshape(-1)), f"i32:{rows}", f"i32:{C}"],
                   shared)
    check(out[0], (x - x.max(axis=1, keepdims=True)).reshape(-1))
    out = run_cuda(tmp_path, ll, "grad_shift", rows, threads,
                   [f32(np.zeros(rows * C)), f32(w.reshape(-1)), f32(x.reshape(-1)),
                    f32(np.zeros(rows * C)), f"i32:{rows}", f"i32:{C}"],
                   shared)
    dx = out[3].reshape(rows, C)
    check(dx[0], w[0] - np.eye(C)[x[0].argmax()] * w[0].sum())
    for r, tied in [(1, [5, 40]), (2, [0, 69])]:
        others = np.setdiff1d(np.arange(C), tied)
        check(dx[r, others], w[r, others])
        # One of the tied elements takes -sum(w), the other keeps its w.
        shifted = dx[r, tied] - w[r, tied]
        check(np.sort(shifted), np.sort([0.0, -w[r].sum()]), atol=1e-5)
