# ===- test_reduction_trees.py - Block sum trees reversed as broadcasts ---=== #
#
# gradients/reduction_trees.mlir: a block's sum tree in workgroup memory
# whose root alone is read after it is reversed as a broadcast of the root's
# adjoint (ReductionTree.cpp); one that also reads another element keeps the
# step-by-step reversal. Both are checked against the tree's linear map,
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
