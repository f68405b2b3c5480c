# ===- test_gradients_control_flow.py - Loops, branches and regions ------=== #
#
# Control flow differentiated and run on the default device (f64): the Horner
# loop of gradients/loop.mlir (an iter_arg and an in-place update read back
# from per-thread tapes), and regions.mlir: a data-dependent scf.if inside an
# scf.for with an scf.execute_region, a private memref.alloca scratch buffer
# (its shadow allocation), and a data-dependent scf.while in both modes.
# Checked against finite differences, closed forms and the dot-product test.
# Loops of every other shape are in test_loops.py; helpers in
# gradient_helpers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np

from gradient_helpers import RNG, f64, launch


class LoopMap:
    """M(X, C, A, P) of loop.mlir: A and P updated through a 5-step loop."""
    n, block, grid = 100, 64, 2

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.state = [RNG.uniform(-1, 1, self.n), RNG.standard_normal(5),
                      RNG.standard_normal(self.n), RNG.standard_normal(self.n)]

    def primal(self, state, tag):
        out = launch(self.tmp / tag, "loop.mlir", "horner_kernel", self.grid,
                     self.block, list(state) + [f"index:{self.n}"])
        return [out[k] for k in range(4)]

    def derivative(self, kernel, shadows):
        args = []
        for primal, shadow in zip(self.state, shadows):
            args += [primal, shadow.copy()]
        out = launch(self.tmp / kernel, "loop.mlir", kernel, self.grid,
                     self.block, args + [f"index:{self.n}"])
        return [out[2 * k + 1] for k in range(4)]


def test_loop_reverse_matches_finite_differences_and_forward(tmp_path):
    m = LoopMap(tmp_path)
    v = [RNG.standard_normal(s.shape) for s in m.state]
    w = [RNG.standard_normal(s.shape) for s in m.state]
    eps = 1e-6
    plus = m.primal([s + eps * d for s, d in zip(m.state, v)], "p")
    minus = m.primal([s - eps * d for s, d in zip(m.state, v)], "m")
    fd = sum(np.dot(p - q, wk) for p, q, wk in zip(plus, minus, w)) / (2 * eps)
    jtw = m.derivative("horner_grad", w)
    ad = sum(np.dot(vk, gk) for vk, gk in zip(v, jtw))
    assert np.isclose(ad, fd, rtol=1e-6, atol=1e-8), (ad, fd)
    jv = m.derivative("horner_tangent", v)
    lhs = sum(np.dot(a, b) for a, b in zip(jv, w))
    assert np.isclose(lhs, ad, rtol=1e-10), (lhs, ad)
    # P is only written: its shadow ends at zero.
    np.testing.assert_array_equal(jtw[3], 0)


class RegionsMap:
    """M(A, C) of regions.mlir: a branch inside a loop with in-place
    overwrites, an iter_arg and an execute_region."""
    n, block, grid = 100, 64, 2

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.A = RNG.uniform(-1, 1, self.n)
        self.C = np.array([-0.3, 0.2, 0.5, -0.6])

    def primal(self, A, C, tag):
        out = launch(self.tmp / tag, "regions.mlir", "f_kernel", self.grid,
                     self.block, [A, C, f"index:{self.n}"])
        return out[0], out[1]

    def reverse(self, wA, wC):
        out = launch(self.tmp / "rev", "regions.mlir", "f_grad", self.grid,
                     self.block, [self.A, wA.copy(), self.C, wC.copy(),
                                  f"index:{self.n}"])
        return out[1], out[3]

    def forward(self, vA, vC):
        out = launch(self.tmp / "fwd", "regions.mlir", "f_tangent", self.grid,
                     self.block, [self.A, vA.copy(), self.C, vC.copy(),
                                  f"index:{self.n}"])
        return out[1], out[3]


def test_regions_reverse_and_forward(tmp_path):
    m = RegionsMap(tmp_path)
    vA, vC = RNG.standard_normal(m.n), RNG.standard_normal(4)
    wA, wC = RNG.standard_normal(m.n), RNG.standard_normal(4)
    eps = 1e-6
    pA, pC = m.primal(m.A + eps * vA, m.C + eps * vC, "p")
    qA, qC = m.primal(m.A - eps * vA, m.C - eps * vC, "m")
    fd = (np.dot(pA - qA, wA) + np.dot(pC - qC, wC)) / (2 * eps)
    gA, gC = m.reverse(wA, wC)
    ad = np.dot(vA, gA) + np.dot(vC, gC)
    assert np.isclose(ad, fd, rtol=1e-6, atol=1e-8), (ad, fd)
    jA, jC = m.forward(vA, vC)
    assert np.isclose(np.dot(jA, wA) + np.dot(jC, wC), ad, rtol=1e-10)


def test_private_allocation_gets_shadow(tmp_path):
    # A[i] = 2 a^2 + 9 a^2 = 11 a^2 through a private scratch buffer.
    n = 100
    A = RNG.uniform(-1, 1, n)
    w, v = RNG.standard_normal(n), RNG.standard_normal(n)
    rev = launch(tmp_path / "rev", "regions.mlir", "g_grad", 2, 64,
                 [A, w.copy(), f"index:{n}"])
    np.testing.assert_allclose(rev[1], 22 * A * w, rtol=1e-12)
    fwd = launch(tmp_path / "fwd", "regions.mlir", "g_tangent", 2, 64,
                 [A, v.copy(), f"index:{n}"])
    np.testing.assert_allclose(fwd[1], 22 * A * v, rtol=1e-12)
    np.testing.assert_allclose(fwd[0], 11 * A * A, rtol=1e-12)


def test_while_forward_mode(tmp_path):
    # x_{k+1} = 1.5 x_k + s while x < 10 (at most 20 steps): the tangent is
    # 1.5^K dx + (1.5^K - 1) / 0.5 ds for the K steps each thread takes.
    n, s = 100, 0.25
    A = RNG.uniform(0.1, 8, n)
    dA, ds = RNG.standard_normal(n), 0.7
    out = launch(tmp_path / "fwd", "regions.mlir", "h_tangent", 2, 64,
                 [A, dA.copy(), f64(s), f64(ds), f"index:{n}"])
    x, steps = A.copy(), np.zeros(n)
    for _ in range(20):
        go = x < 10
        x = np.where(go, 1.5 * x + s, x)
        steps += go
    g = 1.5 ** steps
    np.testing.assert_allclose(out[0], x, rtol=1e-12)
    np.testing.assert_allclose(out[1], g * dA + (g - 1) / 0.5 * ds, rtol=1e-10)


def test_while_reverse_mode(tmp_path):
    # Reverse mode of the data-dependent while: dA = 1.5^K w and
    # ds = (1.5^K - 1) / 0.5 w, against the forward tangent (dot product).
    n, s = 100, 0.25
    A = RNG.uniform(0.1, 8, n)
    w = RNG.standard_normal(n)
    out = launch(tmp_path / "rev", "regions.mlir", "h_grad", 2, 64,
                 [A, w.copy(), f64(s), np.zeros(n), f"index:{n}"])
    x, steps = A.copy(), np.zeros(n)
    for _ in range(20):
        go = x < 10
        x = np.where(go, 1.5 * x + s, x)
        steps += go
    g = 1.5 ** steps
    np.testing.assert_allclose(out[1], g * w, rtol=1e-10)
    np.testing.assert_allclose(out[3], (g - 1) / 0.5 * w, rtol=1e-10)
