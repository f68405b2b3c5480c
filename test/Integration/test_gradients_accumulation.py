# ===- test_gradients_accumulation.py - Adjoints many threads add up -----=== #
#
# Kernels whose adjoints collide in global memory, on the default device:
# gradients/reduction.mlir (f64: a primal atomic sum over threads, a read of
# C[i mod 4] shared by many threads) against finite differences and the
# analytic gradient; a histogram with primal atomics at data-dependent bins
# (parallel.mlir); the transpose of a 2-D five-point stencil (stencil2d.mlir);
# and gpu.global_id repeating along y on 2-D blocks (collectives.mlir). Every
# contribution must arrive exactly once. Helpers: gradient_helpers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np

from gradient_helpers import RNG, launch


class ReductionMap:
    """M(X, C, Out) = (X, C, Out + sum_i fma(X_i, C_{i%4}, X_i^2))."""
    n, block, grid = 200, 64, 4

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.X = RNG.uniform(-1, 1, self.n)
        self.C = RNG.standard_normal(4)
        self.Out = RNG.standard_normal(1)

    def primal(self, X, C, Out, tag):
        out = launch(self.tmp / tag, "reduction.mlir", "g_kernel", self.grid,
                     self.block, [X, C, Out, f"index:{self.n}"])
        return out[0], out[1], out[2]

    def reverse(self, wX, wC, wOut):
        out = launch(self.tmp / "rev", "reduction.mlir", "g_grad", self.grid,
                     self.block, [self.X, wX.copy(), self.C, wC.copy(), self.Out,
                                  wOut.copy(), f"index:{self.n}"])
        return out[1], out[3], out[5]

    def forward(self, vX, vC, vOut):
        out = launch(self.tmp / "fwd", "reduction.mlir", "g_tangent", self.grid,
                     self.block, [self.X, vX.copy(), self.C, vC.copy(), self.Out,
                                  vOut.copy(), f"index:{self.n}"])
        return out[1], out[3], out[5]


def test_reduction_reverse_matches_finite_differences(tmp_path):
    m = ReductionMap(tmp_path)
    v = [RNG.standard_normal(m.n), RNG.standard_normal(4), RNG.standard_normal(1)]
    w = [RNG.standard_normal(m.n), RNG.standard_normal(4), RNG.standard_normal(1)]
    eps = 1e-6
    plus = m.primal(m.X + eps * v[0], m.C + eps * v[1], m.Out + eps * v[2], "p")
    minus = m.primal(m.X - eps * v[0], m.C - eps * v[1], m.Out - eps * v[2], "m")
    fd = sum(np.dot(p - q, wk) for p, q, wk in zip(plus, minus, w)) / (2 * eps)
    g = m.reverse(*w)
    ad = sum(np.dot(vk, gk) for vk, gk in zip(v, g))
    assert np.isclose(ad, fd, rtol=1e-6, atol=1e-8), (ad, fd)
    # The analytic gradient, as an independent check of each component.
    idx = np.arange(m.n) % 4
    np.testing.assert_allclose(
        g[0], w[0] + w[2][0] * (m.C[idx] + 2 * m.X), rtol=1e-12)
    np.testing.assert_allclose(
        g[1], w[1] + w[2][0] * np.bincount(idx, weights=m.X), rtol=1e-10)


def test_reduction_dot_product_forward_reverse(tmp_path):
    m = ReductionMap(tmp_path)
    v = [RNG.standard_normal(m.n), RNG.standard_normal(4), RNG.standard_normal(1)]
    w = [RNG.standard_normal(m.n), RNG.standard_normal(4), RNG.standard_normal(1)]
    jv = m.forward(*v)
    jtw = m.reverse(*w)
    lhs = sum(np.dot(a, b) for a, b in zip(jv, w))
    rhs = sum(np.dot(a, b) for a, b in zip(v, jtw))
    assert np.isclose(lhs, rhs, rtol=1e-10), (lhs, rhs)


def test_histogram_with_primal_atomics(tmp_path):
    n, s = 128, 0.75
    X = RNG.uniform(-2, 2, n).astype(np.float32)
    wbins = RNG.standard_normal(8).astype(np.float32)
    out = launch(tmp_path / "p", "parallel.mlir", "histogram_kernel", 2, 64,
                 [X, np.zeros(8, np.float32), f"f32:{s}"])
    k = np.minimum((np.abs(X) * np.float32(4)).astype(np.uint32), 7)
    expected = np.zeros(8)
    np.add.at(expected, k, X.astype(np.float64) * s)
    np.testing.assert_allclose(out[1], expected, rtol=1e-5, atol=1e-6)
    g = launch(tmp_path / "g", "parallel.mlir", "histogram_grad", 2, 64,
               [X, np.zeros(n, np.float32), np.zeros(8, np.float32), wbins.copy(),
                f"f32:{s}", np.zeros(n, np.float32)])
    np.testing.assert_allclose(g[1], s * wbins[k], rtol=1e-6)
    # The bins' cotangent is read, not consumed (the sum passes it on).
    np.testing.assert_array_equal(g[3], wbins)
    np.testing.assert_allclose(g[5].sum(), np.dot(X.astype(np.float64), wbins[k]),
                               rtol=1e-4)


def test_2d_stencil_colliding_adjoints(tmp_path):
    n = 16
    In = RNG.standard_normal((n, n))
    W = RNG.standard_normal((n, n))
    W[0, :] = W[-1, :] = W[:, 0] = W[:, -1] = 0  # boundary outputs: untouched
    out = launch(tmp_path / "g", "stencil2d.mlir", "laplace_grad", "2,2", "8,8",
                 [In, np.zeros((n, n)), np.zeros((n, n)), W.copy()])
    expected = W.copy()
    inner = W[1:-1, 1:-1]
    for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        expected[1 + di:n - 1 + di, 1 + dj:n - 1 + dj] -= 0.25 * inner
    np.testing.assert_allclose(out[1], expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out[3][1:-1, 1:-1], 0)  # consumed


def test_global_id_accumulation_on_2d_blocks(tmp_path):
    # With blocks of 32x2 threads, gpu.global_id x repeats along y: each X[i]
    # is read twice and its adjoint must receive both contributions.
    threads = 64
    X = RNG.uniform(-1, 1, threads).astype(np.float32)
    w = RNG.standard_normal(2 * threads)
    out = launch(tmp_path, "collectives.mlir", "rows2d_grad", 2, "32,2",
                 [X, np.zeros(threads, np.float32), np.zeros(2 * threads, np.float32),
                  w.astype(np.float32)])
    x = X.astype(np.float64)
    np.testing.assert_allclose(out[1], 2 * x * w.reshape(threads, 2).sum(1),
                               rtol=1e-5, atol=1e-6)
