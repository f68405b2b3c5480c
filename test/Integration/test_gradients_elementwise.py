# ===- test_gradients_elementwise.py - Elementwise kernels, math rules ---=== #
#
# The derivative rules of arith and math, each run in a kernel on the default
# device: gradients/elementwise.mlir (f64: branches with results, an active
# scalar, dup input and output) against float64 finite differences and the
# forward/reverse dot-product test; transcendental.mlir and coverage.mlir (f32:
# every rule SPIR-V can run) against numpy's analytic derivatives; and the
# seed gradient of examples/mul_kernel.mlir. Helpers: gradient_helpers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import numpy as np

from gradient_helpers import BIN, RNG, ROOT, f64, launch


class ElementwiseMap:
    """M(X, Y, s) = (X, f(X, s)) of elementwise.mlir."""
    n, block, grid = 100, 64, 2

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.X = RNG.uniform(-1, 1, self.n)
        self.Y = RNG.standard_normal(self.n)
        self.s = 0.7

    def primal(self, X, Y, s, tag):
        out = launch(self.tmp / tag, "elementwise.mlir", "f_kernel", self.grid,
                     self.block, [X, Y, f64(s), f"index:{self.n}"])
        return out[0], out[1]

    def reverse(self, wX, wY):
        out = launch(self.tmp / "rev", "elementwise.mlir", "f_grad", self.grid,
                     self.block, [self.X, wX.copy(), self.Y, wY.copy(), f64(self.s),
                                  np.zeros(self.n), f"index:{self.n}"])
        return out[1], out[3], out[5].sum()  # J^T w for X, Y, and s

    def forward(self, vX, vY, vs):
        out = launch(self.tmp / "fwd", "elementwise.mlir", "f_tangent",
                     self.grid, self.block,
                     [self.X, vX.copy(), self.Y, vY.copy(), f64(self.s), f64(vs),
                      f"index:{self.n}"])
        return out[1], out[3]  # J v for X, Y


def test_elementwise_reverse_matches_finite_differences(tmp_path):
    m = ElementwiseMap(tmp_path)
    vX, vY, vs = RNG.standard_normal(m.n), RNG.standard_normal(m.n), 0.3
    wX, wY = RNG.standard_normal(m.n), RNG.standard_normal(m.n)
    eps = 1e-6
    Xp, Yp = m.primal(m.X + eps * vX, m.Y + eps * vY, m.s + eps * vs, "plus")
    Xm, Ym = m.primal(m.X - eps * vX, m.Y - eps * vY, m.s - eps * vs, "minus")
    fd = (np.dot(Xp - Xm, wX) + np.dot(Yp - Ym, wY)) / (2 * eps)
    gX, gY, gs = m.reverse(wX, wY)
    ad = np.dot(vX, gX) + np.dot(vY, gY) + vs * gs
    assert np.isclose(ad, fd, rtol=1e-6, atol=1e-8), (ad, fd)
    # Y is only written: its shadow ends at zero; X is only read: accumulates.
    np.testing.assert_array_equal(gY, 0)


def test_elementwise_dot_product_forward_reverse(tmp_path):
    m = ElementwiseMap(tmp_path)
    vX, vY, vs = RNG.standard_normal(m.n), RNG.standard_normal(m.n), -0.4
    wX, wY = RNG.standard_normal(m.n), RNG.standard_normal(m.n)
    jX, jY = m.forward(vX, vY, vs)
    gX, gY, gs = m.reverse(wX, wY)
    lhs = np.dot(jX, wX) + np.dot(jY, wY)
    rhs = np.dot(vX, gX) + np.dot(vY, gY) + vs * gs
    assert np.isclose(lhs, rhs, rtol=1e-12, atol=1e-12), (lhs, rhs)


def test_seed_gradient(tmp_path):
    """grad_mul_kernel of examples/mul_kernel.mlir: dA <- 2 A dA."""
    a = RNG.standard_normal(50).astype(np.float32)
    w = RNG.standard_normal(50).astype(np.float32)
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"),
         os.path.join(ROOT, "examples", "mul_kernel.mlir"),
         "--kernel=grad_mul_kernel", "--grid=1", "--block=64",
         f"--arg={tmp_path / 'a.npy'}", f"--arg={tmp_path / 'w.npy'}",
         "--arg=index:50", f"--out={tmp_path}"],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ)) if (np.save(tmp_path / "a.npy", a),
                                   np.save(tmp_path / "w.npy", w)) else None
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(tmp_path / "arg1.npy"), 2 * a * w,
                               rtol=1e-6)
    np.testing.assert_array_equal(np.load(tmp_path / "arg0.npy"), a * a)


def transcendental_derivative(x):
    """d/dx of h in transcendental.mlir, in float64."""
    from math import erf  # noqa: F401  (documents the erf term below)
    return (np.cos(x) + np.exp(x) * (np.cos(x) - np.sin(x)) + 1 / (2 + x)
            + 1 - np.tanh(x) ** 2 + 1.5 * np.sqrt(2 + x) + 1 / (1 + x * x)
            + 0.5 / np.sqrt(2 + x) + 2 / np.sqrt(np.pi) * np.exp(-x * x)
            + (x >= 0.25) + 2 * x / (1 + x * x))


def test_transcendental_reverse_and_forward(tmp_path):
    n = 256
    x = RNG.uniform(-0.9, 0.9, n).astype(np.float32)
    w = RNG.standard_normal(n).astype(np.float32)
    v = RNG.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    rev = launch(tmp_path / "rev", "transcendental.mlir", "h_grad", 4, 64,
                 [x, np.zeros(n, np.float32), y, w, f"index:{n}"])
    expected = w * transcendental_derivative(x.astype(np.float64))
    np.testing.assert_allclose(rev[1], expected, rtol=2e-4, atol=2e-5)
    np.testing.assert_array_equal(rev[3], 0)
    fwd = launch(tmp_path / "fwd", "transcendental.mlir", "h_tangent", 4, 64,
                 [x, v, y, np.zeros(n, np.float32), f"index:{n}"])
    np.testing.assert_allclose(fwd[3], v * transcendental_derivative(
        x.astype(np.float64)), rtol=2e-4, atol=2e-5)
    # Dot product: <J v, w> = <v, J^T w>.
    lhs = np.dot(fwd[3].astype(np.float64), w)
    rhs = np.dot(v.astype(np.float64), rev[1])
    assert np.isclose(lhs, rhs, rtol=1e-5), (lhs, rhs)


def inverse_primal(x):
    """inverse in transcendental.mlir, in float64."""
    erfc = np.vectorize(__import__("math").erfc)
    return (np.arcsin(x) + np.arccos(x) / 2 + np.arcsinh(2 * x)
            + np.arccosh(2 + x) + np.arctanh(x) + erfc(x) + erfc(4 + 4 * x))


def inverse_derivative(x):
    """d/dx of inverse in transcendental.mlir, in float64."""
    gauss = 2 / np.sqrt(np.pi)
    return (0.5 / np.sqrt(1 - x * x) + 2 / np.sqrt(4 * x * x + 1)
            + 1 / np.sqrt((2 + x) ** 2 - 1) + 1 / (1 - x * x)
            - gauss * np.exp(-x * x) - 4 * gauss * np.exp(-(4 + 4 * x) ** 2))


def test_inverse_functions_and_erfc(tmp_path):
    # Its own generator: the draws, and so the finite-difference check, do
    # not depend on which tests ran before.
    rng = np.random.default_rng(11)
    n = 256
    x = rng.uniform(-0.8, 0.8, n).astype(np.float32)
    d = x.astype(np.float64)
    w = rng.standard_normal(n).astype(np.float32)
    v = rng.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)

    def primal(X, tag):
        return launch(tmp_path / tag, "transcendental.mlir", "inverse_kernel",
                      4, 64, [X, y, f"index:{n}"])[1].astype(np.float64)

    np.testing.assert_allclose(primal(x, "primal"), inverse_primal(d),
                               rtol=1e-5, atol=1e-6)
    rev = launch(tmp_path / "rev", "transcendental.mlir", "inverse_grad", 4, 64,
                 [x, np.zeros(n, np.float32), y, w, f"index:{n}"])
    np.testing.assert_allclose(rev[1], w * inverse_derivative(d), rtol=2e-4,
                               atol=2e-5)
    np.testing.assert_array_equal(rev[3], 0)
    fwd = launch(tmp_path / "fwd", "transcendental.mlir", "inverse_tangent", 4,
                 64, [x, v, y, np.zeros(n, np.float32), f"index:{n}"])
    np.testing.assert_allclose(fwd[3], v * inverse_derivative(d), rtol=2e-4,
                               atol=2e-5)
    # Dot product: <J v, w> = <v, J^T w>.
    rhs = np.dot(v.astype(np.float64), rev[1])
    assert np.isclose(np.dot(fwd[3].astype(np.float64), w), rhs, rtol=1e-5)
    # Central finite differences of the f32 primal kernel, accumulated in
    # float64 (a step large enough for f32's rounding, small enough for the
    # curvature near |x| = 0.8).
    eps = 2e-3
    plus = primal((d + eps * v).astype(np.float32), "plus")
    minus = primal((d - eps * v).astype(np.float32), "minus")
    fd = np.dot((plus - minus) / (2 * eps), w)
    # The error of each f32 difference scales with its own term, not with
    # the sum (whose terms of both signs may cancel): bound it by the terms.
    scale = np.sum(np.abs(v.astype(np.float64) * rev[1]))
    assert abs(fd - rhs) <= 1e-4 * scale, (fd, rhs, scale)


def coverage_partials(x, z):
    """d/dx and d/dz of Y = sum_k c_k term_k(x, z) of coverage.mlir, for
    x in (0.2, 0.9) and z in (-1, -0.2): minimumf and minnumf pick z, maxnumf
    x, copysign(x, z) = -x; floor/ceil/round have zero derivative."""
    c = np.arange(1, 21) / 10
    ln2, ln10 = np.log(2), np.log(10)
    t = np.tan(x)
    dx = (c[0] * (1 + t * t) + c[1] * 2 ** x * ln2 + c[2] * np.exp(x)
          + c[3] / (x * ln2) + c[4] / (x * ln10) - c[5] * 0.5 * x ** -1.5
          + c[6] / 3 * np.cbrt(x) ** -2 + c[7] * np.cosh(x) + c[8] * np.sinh(x)
          + c[9] * z / (x * x + z * z) + c[10] * 3 * x * x - c[11]
          + c[13] - c[15] + c[19] * 2 * x)
    dz = -c[9] * x / (x * x + z * z) + c[12] + c[14]
    return dx, dz


def test_remaining_rules_reverse_and_forward(tmp_path):
    n = 128
    X = RNG.uniform(0.2, 0.9, n).astype(np.float32)
    Z = RNG.uniform(-1, -0.2, n).astype(np.float32)
    w = RNG.standard_normal(n).astype(np.float32)
    v = RNG.standard_normal(n).astype(np.float32)
    u = RNG.standard_normal(n).astype(np.float32)
    zeros = np.zeros(n, np.float32)
    dx, dz = coverage_partials(X.astype(np.float64), Z.astype(np.float64))
    rev = launch(tmp_path / "rev", "coverage.mlir", "terms_grad", 2, 64,
                 [X, zeros, Z, zeros, zeros, w, f"index:{n}"])
    np.testing.assert_allclose(rev[1], w * dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(rev[3], w * dz, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(rev[5], 0)
    fwd = launch(tmp_path / "fwd", "coverage.mlir", "terms_tangent", 2, 64,
                 [X, v, Z, u, zeros, zeros, f"index:{n}"])
    np.testing.assert_allclose(fwd[5], v * dx + u * dz, rtol=1e-4, atol=1e-4)
    lhs = np.dot(fwd[5].astype(np.float64), w)
    rhs = np.dot(v, rev[1]) + np.dot(u, rev[3])
    assert np.isclose(lhs, rhs, rtol=1e-5), (lhs, rhs)
