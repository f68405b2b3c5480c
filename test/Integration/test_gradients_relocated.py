# ===- test_gradients_relocated.py - Relocated objects -------------------=== #
#
# Gradient kernels reading and writing relocated objects, run on the default
# device (f64): a constant host table (gradients/relocated.mlir, inactive, no
# shadow) under ABI v1 and v2 with identical gradients, and a writable record
# (relocated_state.mlir) whose shadow record the loader provides like a dup
# buffer's shadow. Checked against finite differences, the analytic gradient
# and the dot-product test. Helpers: gradient_helpers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np

from gradient_helpers import RNG, launch


class RelocatedMap:
    """M(A) = A^2 * T[i % 4] + A with T a relocated host table."""
    n, block, grid = 100, 64, 2

    def __init__(self, tmp_path, abi):
        self.tmp = tmp_path / abi
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.A = RNG.uniform(-1, 1, self.n)
        self.T = np.array([0.5, -1.25, 2.0, 3.0])
        np.save(self.tmp / "table.npy", self.T)
        self.extra = [f"--reloc=host.table={self.tmp / 'table.npy'}",
                      f"--abi={abi}"]

    def run(self, kernel, args, tag):
        return launch(self.tmp / tag, "relocated.mlir", kernel, self.grid,
                      self.block, args + [f"index:{self.n}"], self.extra)

    def primal(self, A, tag):
        return self.run("f_kernel", [A], tag)[0]

    def reverse(self, w):
        return self.run("f_grad", [self.A, w.copy()], "rev")[1]

    def forward(self, v):
        return self.run("f_tangent", [self.A, v.copy()], "fwd")[1]


def test_relocated_table_gradient_v1_and_v2(tmp_path):
    v, w = RNG.standard_normal(RelocatedMap.n), RNG.standard_normal(RelocatedMap.n)
    results = {}
    for abi in ("v2", "v1"):
        m = RelocatedMap(tmp_path, abi)
        m.A = results.setdefault("A", m.A)
        eps = 1e-6
        fd = np.dot(m.primal(m.A + eps * v, "p") - m.primal(m.A - eps * v, "m"),
                    w) / (2 * eps)
        g = m.reverse(w)
        assert np.isclose(np.dot(v, g), fd, rtol=1e-6, atol=1e-8)
        t = m.T[np.arange(m.n) % 4]
        np.testing.assert_allclose(g, w * (2 * m.A * t + 1), rtol=1e-12)
        assert np.isclose(np.dot(m.forward(v), w), np.dot(v, g), rtol=1e-12)
        results[abi] = g
    np.testing.assert_array_equal(results["v1"], results["v2"])


def test_writable_record_gets_shadow_record(tmp_path):
    # g stores differentiated data into the writable record Main.state: its
    # shadow record Main.state#shadow is provided like a dup buffer's shadow.
    n = 100
    A = RNG.uniform(-1, 1, n)
    T = np.array([0.5, -1.25, 2.0, 3.0])
    t = T[np.arange(n) % 4]
    np.save(tmp_path / "table.npy", T)
    np.save(tmp_path / "state.npy", np.zeros(128))
    w = RNG.standard_normal(128)
    v = RNG.standard_normal(n)
    np.save(tmp_path / "w.npy", w)
    np.save(tmp_path / "zero.npy", np.zeros(128))

    def relocs(shadow):
        return [f"--reloc=host.table={tmp_path / 'table.npy'}",
                f"--reloc=Main.state={tmp_path / 'state.npy'}",
                f"--reloc=Main.state#shadow={tmp_path / shadow}"]

    def state(directory, key="Main_state"):
        return np.load(directory / f"out-{directory.name}" / f"reloc-{key}.npy")

    rev = launch(tmp_path / "g_grad", "relocated_state.mlir", "g_grad", 2, 64,
                 [A, np.zeros(n), f"index:{n}"], relocs("w.npy"))
    np.testing.assert_allclose(rev[1], w[:n] * 2 * A * t, rtol=1e-12)
    # The overwritten part of the state's cotangent is consumed, the rest kept.
    shadow = state(tmp_path / "g_grad", "Main_state_shadow")
    np.testing.assert_array_equal(shadow[:n], 0)
    np.testing.assert_array_equal(shadow[n:], w[n:])

    fwd = launch(tmp_path / "g_tangent", "relocated_state.mlir", "g_tangent", 2, 64,
                 [A, v.copy(), f"index:{n}"], relocs("zero.npy"))
    tangent = state(tmp_path / "g_tangent", "Main_state_shadow")
    np.testing.assert_allclose(tangent[:n], 2 * A * t * v, rtol=1e-12)
    np.testing.assert_allclose(state(tmp_path / "g_tangent")[:n], A * A * t,
                               rtol=1e-12)
    # Dot-product test between the two modes.
    assert np.isclose(np.dot(tangent, w), np.dot(v, rev[1]), rtol=1e-12)
