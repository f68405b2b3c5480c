# ===- test_gradients.py - Derivatives proven by running kernels ---------=== #
#
# For each gradient kernel of test/Integration/gradients, on the default
# device: reverse mode against central finite differences in float64 of
# <M(s), w> (M maps the initial state of all buffers and active scalars to the
# final state of the buffers), and the dot-product test <J v, w> = <v, J^T w>
# between forward and reverse mode. Enzyme's semantics: on entry reverse
# shadows hold w, on exit J^T w; forward shadows hold v on entry, J v on exit.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
KERNELS = os.path.join(ROOT, "test", "Integration", "gradients")
RNG = np.random.default_rng(7)


def launch(tmp_path, name, kernel, grid, block, args, extra=()):
    """Runs `kernel`; returns the final value of every buffer argument."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(tmp_path / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp_path / f'in{k}.npy'}")
        else:
            specs.append(f"--arg={arg}")
    out = tmp_path / f"out-{kernel}"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), os.path.join(KERNELS, name),
         f"--kernel={kernel}", f"--grid={grid}", f"--block={block}",
         f"--out={out}"] + specs + list(extra), capture_output=True, text=True,
        timeout=300)
    assert result.returncode == 0, result.stderr
    return {k: np.load(out / f"arg{k}.npy")
            for k, arg in enumerate(args) if isinstance(arg, np.ndarray)}


def f64(value):
    return f"f64:{value!r}"


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
    n = 256
    x = RNG.uniform(-0.8, 0.8, n).astype(np.float32)
    d = x.astype(np.float64)
    w = RNG.standard_normal(n).astype(np.float32)
    v = RNG.standard_normal(n).astype(np.float32)
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
    assert np.isclose(fd, rhs, rtol=1e-4), (fd, rhs)


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


def test_external_rule_of_a_frontend_op(tmp_path):
    # nabla_test.cube gets its derivative from a model the "frontend" (the
    # test dialect) attached; differentiate with nabla-opt, lower the test op,
    # run reverse and forward mode on the device.
    plain = tmp_path / "plain.mlir"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-opt"), os.path.join(KERNELS, "external_rule.mlir"),
         "--nabla-differentiate", "--nabla-test-lower", "-o", str(plain)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    n = 100
    a = RNG.uniform(-1, 1, n).astype(np.float32)
    w = RNG.standard_normal(n).astype(np.float32)
    v = RNG.standard_normal(n).astype(np.float32)

    def run(kernel, args, tag):
        tmp = tmp_path / tag
        tmp.mkdir()
        specs = []
        for k, arg in enumerate(args):
            np.save(tmp / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp / f'in{k}.npy'}")
        r = subprocess.run([os.path.join(BIN, "nabla-run"), str(plain),
                            f"--kernel={kernel}", "--grid=2", "--block=64",
                            f"--out={tmp}"] + specs + [f"--arg=index:{n}"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return [np.load(tmp / f"arg{k}.npy") for k in range(len(args))]

    grad = run("f_grad", [a, w], "rev")[1]
    np.testing.assert_allclose(grad, w * (3 * a * a + 1), rtol=1e-5)
    tangent = run("f_tangent", [a, v], "fwd")[1]
    np.testing.assert_allclose(tangent, v * (3 * a * a + 1), rtol=1e-5)
    eps = 1e-2
    plus = run("f_kernel", [(a + eps * v).astype(np.float32)], "p")[0]
    minus = run("f_kernel", [(a - eps * v).astype(np.float32)], "m")[0]
    fd = np.dot(plus.astype(np.float64) - minus, w) / (2 * eps)
    assert np.isclose(np.dot(v, grad), fd, rtol=1e-3)
    assert np.isclose(np.dot(tangent, w), np.dot(v, grad), rtol=1e-4)


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


def device_subgroup_size(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    np.save(tmp_path / "info.npy", np.zeros(128, np.int32))
    r = subprocess.run(
        [os.path.join(BIN, "nabla-run"),
         os.path.join(ROOT, "test", "Integration", "corpus", "subgroup_size.mlir"),
         "--kernel=subgroup_info", "--grid=1", "--block=64", f"--out={tmp_path}",
         f"--arg={tmp_path / 'info.npy'}"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return int(np.load(tmp_path / "arg0.npy")[0])


def run_pair(tmp_path, kernel, X, seed, grid, block, out_len=None,
             name="parallel.mlir"):
    """Runs `kernel` on (X, seedX, Y, seedY) and returns the final shadows."""
    n = len(X)
    Y = np.zeros(out_len or n, np.float32)
    out = launch(tmp_path / kernel, name, kernel, grid, block,
                 [X, seed[0].astype(np.float32), Y, seed[1].astype(np.float32)])
    return out[1].astype(np.float64), out[3].astype(np.float64)


def test_shuffle_xor_butterfly(tmp_path):
    n = 64
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    w, v = RNG.standard_normal(n), RNG.standard_normal(n)
    x = X.astype(np.float64)
    S = np.repeat(x.reshape(-1, 8).sum(1), 8)
    wX = RNG.standard_normal(n)
    gX, gY = run_pair(tmp_path, "butterfly_grad", X, (wX, w), 1, n)
    expected = wX + np.repeat((w * x).reshape(-1, 8).sum(1), 8) + w * S
    np.testing.assert_allclose(gX, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(gY, 0)
    tX, tY = run_pair(tmp_path, "butterfly_tangent", X, (v, np.zeros(n)), 1, n)
    dS = np.repeat(v.reshape(-1, 8).sum(1), 8)
    np.testing.assert_allclose(tY, dS * x + S * v, rtol=1e-4, atol=1e-5)
    # Dot-product test: <J v, w> = <v, J^T w> (with zero cotangent on X's
    # final state, since X is only read).
    gX0, _ = run_pair(tmp_path / "dot", "butterfly_grad", X, (np.zeros(n), w), 1, n)
    assert np.isclose(np.dot(tY, w), np.dot(v, gX0), rtol=1e-4)


def test_shuffle_down_up_neighbours(tmp_path):
    size = device_subgroup_size(tmp_path / "sg")
    n = 64
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    x = X.astype(np.float64)
    lane = np.arange(n) % size
    has_next, has_prev = lane + 1 < size, lane >= 1
    nxt = np.where(has_next, np.roll(x, -1), 0)
    w, v = RNG.standard_normal(n), RNG.standard_normal(n)
    gX, gY = run_pair(tmp_path, "neighbours_grad", X, (np.zeros(n), w), 1, n)
    expected = (w * nxt + np.where(has_prev, np.roll(w * x, 1), 0)
                + np.where(has_next, 2 * x * np.roll(w, -1), 0))
    np.testing.assert_allclose(gX, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(gY, 0)
    tX, tY = run_pair(tmp_path, "neighbours_tangent", X, (v, np.zeros(n)), 1, n)
    assert np.isclose(np.dot(tY, w), np.dot(v, gX), rtol=1e-4)


def test_subgroup_reduce_add(tmp_path):
    size = device_subgroup_size(tmp_path / "sg")
    n = 64
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    x = X.astype(np.float64)
    S = np.repeat(x.reshape(-1, size).sum(1), size)
    w, v = RNG.standard_normal(n), RNG.standard_normal(n)
    gX, _ = run_pair(tmp_path, "reduce_grad", X, (np.zeros(n), w), 1, n)
    np.testing.assert_allclose(
        gX, w * S + np.repeat((w * x).reshape(-1, size).sum(1), size),
        rtol=1e-4, atol=1e-5)
    _, tY = run_pair(tmp_path, "reduce_tangent", X, (v, np.zeros(n)), 1, n)
    assert np.isclose(np.dot(tY, w), np.dot(v, gX), rtol=1e-4)


def test_block_tree_reduction_with_barriers(tmp_path):
    blocks, n = 4, 256
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    x = X.astype(np.float64)
    S = x.reshape(blocks, 64).sum(1)
    wOut = RNG.standard_normal(blocks)
    gX, gOut = run_pair(tmp_path, "tree_grad", X, (np.zeros(n), wOut), blocks,
                        64, out_len=blocks)
    np.testing.assert_allclose(gX, np.repeat(2 * S * wOut, 64), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_array_equal(gOut, 0)
    # Finite differences of <Out, w> in float64 from the primal kernel.
    v = RNG.standard_normal(n)
    eps = 1e-2

    def primal(values, tag):
        out = launch(tmp_path / tag, "parallel.mlir", "tree_kernel", blocks, 64,
                     [values.astype(np.float32), np.zeros(blocks, np.float32)])
        return out[1].astype(np.float64)

    fd = np.dot(primal(x + eps * v, "p") - primal(x - eps * v, "m"), wOut) / (2 * eps)
    assert np.isclose(np.dot(v, gX), fd, rtol=1e-3)


def test_kernel_adjoints_match_hand_written_wrappers(tmp_path):
    # nabla.kernel_adjoint generates the gradient kernel (with the tile's
    # zeroed shadow attribution for the tree); it gives the same shadows as
    # the hand-written wrappers.
    blocks, n = 4, 256
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    wOut = RNG.standard_normal(blocks)
    hand = run_pair(tmp_path / "hand", "tree_grad", X, (np.zeros(n), wOut),
                    blocks, 64, out_len=blocks)
    generated = run_pair(tmp_path / "gen", "tree_kernel_adjoint", X,
                         (np.zeros(n), wOut), blocks, 64, out_len=blocks)
    np.testing.assert_array_equal(generated[0], hand[0])
    np.testing.assert_array_equal(generated[1], hand[1])
    w = RNG.standard_normal(64)
    hand = run_pair(tmp_path / "hand2", "butterfly_grad", X[:64], (np.zeros(64), w), 1, 64)
    generated = run_pair(tmp_path / "gen2", "butterfly_kernel_adjoint", X[:64],
                         (np.zeros(64), w), 1, 64)
    np.testing.assert_array_equal(generated[0], hand[0])


def run_rows(tmp_path, kernel, rows, X, w):
    """Runs a one-block-per-row kernel of block_kernels.mlir and its
    generated adjoint; returns (Y, dX) in float64, rows x 64."""
    n = rows * 64
    out = launch(tmp_path / "p", "block_kernels.mlir", kernel, rows, 64,
                 [X, np.zeros(n, np.float32)])
    grad = launch(tmp_path / "g", "block_kernels.mlir", kernel + "_adjoint",
                  rows, 64, [X, np.zeros(n, np.float32), np.zeros(n, np.float32),
                             w.astype(np.float32)])
    np.testing.assert_array_equal(grad[3], 0)  # Y is only written
    return (out[1].astype(np.float64).reshape(rows, 64),
            grad[1].astype(np.float64).reshape(rows, 64))


def test_softmax_rows_through_workgroup_reductions(tmp_path):
    # One block per row; the adjoint kernel is generated by
    # nabla.kernel_adjoint. Softmax's VJP: dX = y * (w - <y, w>) per row.
    rows = 4
    X = RNG.uniform(-2, 2, rows * 64).astype(np.float32)
    w = RNG.standard_normal(rows * 64)
    Y, dX = run_rows(tmp_path, "softmax", rows, X, w)
    x = X.astype(np.float64).reshape(rows, 64)
    y = np.exp(x - x.max(1, keepdims=True))
    y /= y.sum(1, keepdims=True)
    np.testing.assert_allclose(Y, y, rtol=1e-5)
    wr = w.reshape(rows, 64)
    expected = y * (wr - (y * wr).sum(1, keepdims=True))
    np.testing.assert_allclose(dX, expected, rtol=1e-3, atol=1e-6)


def test_tiled_stencil_with_halos(tmp_path):
    blocks = 3
    n = blocks * 64
    X = RNG.uniform(-1, 1, n + 2).astype(np.float32)
    w = RNG.standard_normal(n)
    out = launch(tmp_path / "p", "block_kernels.mlir", "stencil", blocks, 64,
                 [X, np.zeros(n, np.float32)])
    x = X.astype(np.float64)
    # float32 sums of three terms: a few ulps where they nearly cancel.
    np.testing.assert_allclose(out[1], 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:],
                               rtol=1e-5, atol=1e-7)
    grad = launch(tmp_path / "g", "block_kernels.mlir", "stencil_adjoint",
                  blocks, 64, [X, np.zeros(n + 2, np.float32),
                               np.zeros(n, np.float32), w.astype(np.float32)])
    expected = np.zeros(n + 2)
    expected[:-2] += 0.25 * w
    expected[1:-1] += 0.5 * w
    expected[2:] += 0.25 * w
    np.testing.assert_allclose(grad[1], expected, rtol=1e-5, atol=1e-6)


def test_tiled_matmul_with_workgroup_tiles(tmp_path):
    # C = A B with 8x8 workgroup tiles and 8x8 blocks (nested loops, barriers,
    # 2-D tiles); the adjoint kernel from nabla.kernel_adjoint gives
    # dA = dC B^T and dB = A^T dC (A and B are only read: they accumulate).
    n = 16
    A = RNG.uniform(-1, 1, (n, n)).astype(np.float32)
    B = RNG.uniform(-1, 1, (n, n)).astype(np.float32)
    W = RNG.standard_normal((n, n)).astype(np.float32)
    zeros = np.zeros((n, n), np.float32)

    def run2d(kernel, args, tag):
        tmp = tmp_path / tag
        tmp.mkdir()
        specs = []
        for k, arg in enumerate(args):
            np.save(tmp / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp / f'in{k}.npy'}")
        r = subprocess.run([os.path.join(BIN, "nabla-run"),
                            os.path.join(KERNELS, "block_kernels.mlir"),
                            f"--kernel={kernel}", "--grid=2,2", "--block=8,8",
                            f"--out={tmp}"] + specs,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return [np.load(tmp / f"arg{k}.npy").astype(np.float64) for k in range(len(args))]

    C = run2d("matmul", [A, B, zeros], "p")[2]
    a, b, w = A.astype(np.float64), B.astype(np.float64), W.astype(np.float64)
    np.testing.assert_allclose(C, a @ b, rtol=1e-5, atol=1e-6)
    out = run2d("matmul_adjoint", [A, zeros, B, zeros, zeros, W], "g")
    np.testing.assert_allclose(out[1], w @ b.T, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out[3], a.T @ w, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(out[5], 0)  # C is only written


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


def test_subgroup_reduce_max_routes_to_the_winner(tmp_path):
    # Y = X * M with M the subgroup maximum; ties (the repeated maxima of the
    # second half) give the derivative of M to the lowest lane only.
    size = device_subgroup_size(tmp_path / "sg")
    n = 64
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    X[n // 2::size] = 2.0  # every subgroup of the second half: a tie at 2
    X[n // 2 + 1::size] = 2.0
    x = X.astype(np.float64)
    groups = x.reshape(-1, size)
    M = np.repeat(groups.max(1), size)
    winner = np.zeros(n, bool)
    winner[np.arange(0, n, size) + groups.argmax(1)] = True  # argmax: lowest lane
    w, v = RNG.standard_normal(n), RNG.standard_normal(n)
    gX, _ = run_pair(tmp_path, "reducemax_grad", X, (np.zeros(n), w), 1, n)
    expected = w * M + winner * np.repeat((w * x).reshape(-1, size).sum(1), size)
    np.testing.assert_allclose(gX, expected, rtol=1e-4, atol=1e-5)
    _, tY = run_pair(tmp_path, "reducemax_tangent", X, (v, np.zeros(n)), 1, n)
    assert np.isclose(np.dot(tY, w), np.dot(v, gX), rtol=1e-4)


def test_layernorm_rows(tmp_path):
    # dX = (w - mean(w) - yhat mean(w yhat)) / sigma per row.
    rows = 4
    X = RNG.uniform(-2, 2, rows * 64).astype(np.float32)
    w = RNG.standard_normal(rows * 64)
    Y, dX = run_rows(tmp_path, "layernorm", rows, X, w)
    x = X.astype(np.float64).reshape(rows, 64)
    mu = x.mean(1, keepdims=True)
    sigma = np.sqrt(((x - mu) ** 2).mean(1, keepdims=True) + 1e-5)
    yhat = (x - mu) / sigma
    np.testing.assert_allclose(Y, yhat, rtol=1e-4, atol=1e-5)
    wr = w.reshape(rows, 64)
    expected = (wr - wr.mean(1, keepdims=True)
                - yhat * (wr * yhat).mean(1, keepdims=True)) / sigma
    np.testing.assert_allclose(dX, expected, rtol=1e-3, atol=1e-4)


def test_sequential_block_reduction(tmp_path):
    # Thread 0 sums the block's tile of X^2 after a barrier: dX = 2 X dOut.
    blocks, n = 3, 192
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    wOut = RNG.standard_normal(blocks)
    out = launch(tmp_path / "p", "block_kernels.mlir", "sequential", blocks, 64,
                 [X, np.zeros(blocks, np.float32)])
    x = X.astype(np.float64)
    np.testing.assert_allclose(out[1], (x * x).reshape(blocks, 64).sum(1), rtol=1e-5)
    grad = launch(tmp_path / "g", "block_kernels.mlir", "sequential_adjoint",
                  blocks, 64, [X, np.zeros(n, np.float32),
                               np.zeros(blocks, np.float32), wOut.astype(np.float32)])
    np.testing.assert_allclose(grad[1], 2 * x * np.repeat(wOut, 64), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(grad[3], 0)


def run_collective(tmp_path, stem, X, w, v, blocks=2):
    """Reverse (generated kernel adjoint, zero cotangent on X) and forward
    shadows of collectives.mlir's `stem` over `blocks` workgroups of 64."""
    gX, gY = run_pair(tmp_path / "rev", stem + "_grad", X,
                      (np.zeros(len(X)), w), blocks, 64,
                      name="collectives.mlir")
    np.testing.assert_array_equal(gY, 0)  # Y is only written
    _, tY = run_pair(tmp_path / "fwd", stem + "_tangent", X,
                     (v, np.zeros(len(X))), blocks, 64, name="collectives.mlir")
    # Dot-product test between the two modes.
    assert np.isclose(np.dot(tY, w), np.dot(v, gX), rtol=1e-4), stem
    return gX, tY


def test_all_reduce_add_workgroup(tmp_path):
    n = 128
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    x, w, v = X.astype(np.float64), RNG.standard_normal(n), RNG.standard_normal(n)
    S = np.repeat(x.reshape(2, 64).sum(1), 64)
    gX, tY = run_collective(tmp_path, "allsum", X, w, v)
    np.testing.assert_allclose(
        gX, w * S + np.repeat((w * x).reshape(2, 64).sum(1), 64),
        rtol=1e-4, atol=1e-5)
    dS = np.repeat(v.reshape(2, 64).sum(1), 64)
    np.testing.assert_allclose(tY, dS * x + S * v, rtol=1e-4, atol=1e-5)


def test_all_reduce_max_goes_to_lowest_thread(tmp_path):
    # Each workgroup's maximum appears three times: its derivative goes to
    # the lowest thread holding it.
    n = 128
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    for b, spots in ((0, (9, 40, 63)), (1, (3, 4, 50))):
        X[64 * b + np.array(spots)] = 1.5
    x, w, v = X.astype(np.float64), RNG.standard_normal(n), RNG.standard_normal(n)
    gX, tY = run_collective(tmp_path, "allmax", X, w, v)
    winner = np.zeros(n)
    winner[[9, 64 + 3]] = 1
    expected = w * 1.5 + winner * np.repeat((w * x).reshape(2, 64).sum(1), 64)
    np.testing.assert_allclose(gX, expected, rtol=1e-4, atol=1e-5)


def others_product(x, group):
    """Per element, the product of the other members of its group."""
    g = x.reshape(-1, group)
    out = np.empty_like(g)
    for j in range(group):
        out[:, j] = np.prod(np.delete(g, j, axis=1), axis=1)
    return out.reshape(-1)


def test_all_reduce_mul_with_zeros(tmp_path):
    # Workgroup 0 holds one zero (only that thread gets a non-zero weight),
    # workgroup 1 none (weights are products of the others).
    n = 128
    X = RNG.uniform(0.9, 1.1, n).astype(np.float32)
    X[17] = 0
    x, w, v = X.astype(np.float64), RNG.standard_normal(n), RNG.standard_normal(n)
    gX, tY = run_collective(tmp_path, "allprod", X, w, v)
    weight = others_product(x, 64)
    assert weight[17] != 0 and np.all(weight[:64][np.arange(64) != 17] == 0)
    np.testing.assert_allclose(
        gX, w + weight * np.repeat(w.reshape(2, 64).sum(1), 64),
        rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        tY, v + np.repeat((weight * v).reshape(2, 64).sum(1), 64),
        rtol=1e-4, atol=1e-5)


def test_subgroup_reduce_mul_with_zeros(tmp_path):
    size = device_subgroup_size(tmp_path / "sg")
    n = 128
    X = RNG.uniform(0.5, 1.5, n).astype(np.float32)
    X[1] = 0                          # subgroup 0: one zero
    X[size + 2] = X[size + 3] = 0     # subgroup 1: two zeros, all weights 0
    x, w, v = X.astype(np.float64), RNG.standard_normal(n), RNG.standard_normal(n)
    gX, _ = run_collective(tmp_path, "subprod", X, w, v)
    P = np.repeat(x.reshape(-1, size).prod(1), size)
    weight = others_product(x, size)
    expected = w * P + weight * np.repeat((w * x).reshape(-1, size).sum(1), size)
    np.testing.assert_allclose(gX, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(gX[size:2 * size], 0)


def test_shuffle_idx_gather_scatters_back(tmp_path):
    # Y = X * X[lane // 2]: lanes of the lower half of each subgroup are read
    # by two lanes, so their adjoints sum two contributions.
    size = device_subgroup_size(tmp_path / "sg")
    n = 128
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    x, w, v = X.astype(np.float64), RNG.standard_normal(n), RNG.standard_normal(n)
    lane = np.arange(n) % size
    src = np.arange(n) - lane + lane // 2
    gX, tY = run_collective(tmp_path, "gather", X, w, v)
    expected = w * x[src]
    np.add.at(expected, src, w * x)
    np.testing.assert_allclose(gX, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tY, v[src] * x + x[src] * v, rtol=1e-4, atol=1e-5)


def test_workgroup_atomic_max_goes_to_storing_thread(tmp_path):
    # Y = X * max: the max's cotangent (sum of w * x over the workgroup) goes
    # to the thread whose atomic stored the final value; with ties, to exactly
    # one of the tied threads.
    n = 128
    X = RNG.uniform(-1, 1, n).astype(np.float32)
    X[[5, 30]] = 1.5          # a tie in workgroup 0
    X[64 + 40] = 1.25
    x, w = X.astype(np.float64), RNG.standard_normal(n)
    gX, gY = run_pair(tmp_path, "atomicmax_grad", X, (np.zeros(n), w), 2, 64,
                      name="collectives.mlir")
    np.testing.assert_array_equal(gY, 0)
    out = launch(tmp_path / "p", "collectives.mlir", "atomicmax_kernel", 2, 64,
                 [X, np.zeros(n, np.float32)])
    M = np.repeat(x.reshape(2, 64).max(1), 64)
    np.testing.assert_allclose(out[1], x * M, rtol=1e-6)
    total = np.repeat((w * x).reshape(2, 64).sum(1), 64)
    rest = gX - w * M
    winners = np.flatnonzero(np.abs(rest) > 1e-4 * np.abs(total).max())
    assert len(winners) == 2 and winners[0] in (5, 30) and winners[1] == 104, winners
    np.testing.assert_allclose(rest[winners], total[winners], rtol=1e-4)
    # Forward mode: the max's tangent is the winner's. Without ties the
    # winner is unique, and the dot-product test holds.
    X[30] = 1.4
    x, v = X.astype(np.float64), RNG.standard_normal(n)
    _, tY = run_pair(tmp_path / "fwd", "atomicmax_tangent", X, (v, np.zeros(n)),
                     2, 64, name="collectives.mlir")
    M = np.repeat(x.reshape(2, 64).max(1), 64)
    dM = np.repeat(v[[5, 104]], 64)
    np.testing.assert_allclose(tY, dM * x + M * v, rtol=1e-5, atol=1e-6)
    gX, _ = run_pair(tmp_path / "rev", "atomicmax_grad", X, (np.zeros(n), w), 2,
                     64, name="collectives.mlir")
    assert np.isclose(np.dot(tY, w), np.dot(v, gX), rtol=1e-4)


def test_workgroup_atomic_min_in_loop(tmp_path):
    # Two atomic minima per thread from a loop: the minimum's cotangent goes
    # to the one (thread, iteration) that stored it. Compared with finite
    # differences of the primal kernel.
    threads = 128
    X = RNG.uniform(-1, 1, 2 * threads).astype(np.float32)
    w = RNG.standard_normal(threads)
    gX, _ = run_pair(tmp_path, "atomicmin_grad", X, (np.zeros(2 * threads), w),
                     2, 64, out_len=threads, name="collectives.mlir")
    x = X.astype(np.float64)
    pairs = x.reshape(threads, 2).sum(1)
    mins = x.reshape(2, 128).min(1)
    expected = np.repeat(np.repeat(mins, 64) * w, 2)
    for b in range(2):
        j = 128 * b + np.argmin(x[128 * b:128 * (b + 1)])
        expected[j] += np.dot(w[64 * b:64 * (b + 1)], pairs[64 * b:64 * (b + 1)])
    np.testing.assert_allclose(gX, expected, rtol=1e-4, atol=1e-5)


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


# Deterministic kernel adjoints (gradients/deterministic.mlir): the trailing
# scratch holds a counter and `nabla.scratch_words_per_block` words per block.
def scratch_words(kernel, blocks, name="deterministic.mlir"):
    out = subprocess.run([os.path.join(BIN, "nabla-opt"), "--nabla-differentiate",
                          os.path.join(KERNELS, name)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = next(l for l in out.stdout.splitlines() if f"gpu.func @{kernel}(" in l)
    words = int(line.split("nabla.scratch_words_per_block = ")[1].split(" ")[0])
    return 1 + words * blocks


def run_scale(tmp_path, kernel, X, W, seed, blocks, n, dtype, scratch=None,
              name="deterministic.mlir"):
    args = [X, np.zeros_like(X), W, np.zeros_like(W), np.zeros_like(X), seed,
            f"index:{n}"]
    if scratch is not None:
        args.append(scratch)
    out = launch(tmp_path, name, kernel, blocks, 256, args)
    return out


def test_deterministic_scale_bit_identical(tmp_path):
    # 64 blocks of 256 threads add w[0]'s and w[1]'s adjoints: ordered, every
    # launch gives the same bits (seeds of mixed magnitude make the order
    # visible); the atomic adjoint agrees up to rounding.
    blocks, n = 64, 64 * 256 - 5
    X = (RNG.standard_normal(n + 5) * 10.0 ** RNG.integers(-4, 4, n + 5)).astype(np.float32)
    W = np.array([0.7, -1.3], np.float32)
    seed = (RNG.standard_normal(n + 5) * 10.0 ** RNG.integers(-4, 4, n + 5)).astype(np.float32)
    scratch = np.zeros(scratch_words("scale_ordered", blocks), np.int32)
    runs = [run_scale(tmp_path / f"r{k}", "scale_ordered", X, W, seed, blocks, n,
                      np.float32, scratch) for k in range(3)]
    x, s = X[:n].astype(np.float64), seed[:n].astype(np.float64)
    expected = np.array([np.dot(s, x), s.sum()])
    for out in runs:
        np.testing.assert_allclose(out[3], expected, rtol=1e-4)
        np.testing.assert_allclose(out[1][:n], s * 0.7, rtol=1e-6)
        assert out[3].tobytes() == runs[0][3].tobytes()
        assert out[1].tobytes() == runs[0][1].tobytes()
        # The kernel leaves the counter at zero for the next launch.
        assert out[7][0] == 0
    atomic = run_scale(tmp_path / "atomic", "scale_atomic", X, W, seed, blocks, n,
                       np.float32)
    np.testing.assert_allclose(atomic[3], runs[0][3], rtol=1e-4)


def test_deterministic_scale_f64_and_reuse(tmp_path):
    # f64 partials take two scratch words; one scratch serves repeated
    # launches (the previous launch reset its counter).
    blocks, n = 16, 16 * 256
    X = RNG.standard_normal(n)
    W = np.array([1.5, 0.25])
    seed = RNG.standard_normal(n)
    f64 = "deterministic_f64.mlir"
    scratch = np.zeros(scratch_words("scale64_ordered", blocks, f64), np.int32)
    first = run_scale(tmp_path / "a", "scale64_ordered", X, W, seed, blocks, n,
                      np.float64, scratch, f64)
    again = run_scale(tmp_path / "b", "scale64_ordered", X, W, seed, blocks, n,
                      np.float64, first[7], f64)
    np.testing.assert_allclose(first[3], [np.dot(seed, X), seed.sum()], rtol=1e-12)
    assert again[3].tobytes() == first[3].tobytes()


def test_deterministic_workgroup_broadcast(tmp_path):
    # Y = s X + s with s = w² broadcast through workgroup memory: dW[0] =
    # 2 w Σ seed (x + 1), ordered in the block (tile[0]) and over blocks.
    blocks = 32
    n = blocks * 64
    X = RNG.standard_normal(n).astype(np.float32)
    W = np.array([0.8], np.float32)
    seed = RNG.standard_normal(n).astype(np.float32)
    scratch = np.zeros(scratch_words("broadcast_ordered", blocks), np.int32)
    outs = []
    for k in range(3):
        out = launch(tmp_path / f"r{k}", "deterministic.mlir", "broadcast_ordered",
                     blocks, 64, [X, np.zeros_like(X), W, np.zeros_like(W),
                                  np.zeros_like(X), seed, scratch])
        outs.append(out)
    x, s = X.astype(np.float64), seed.astype(np.float64)
    np.testing.assert_allclose(outs[0][3], [2 * 0.8 * np.dot(s, x + 1)], rtol=1e-4)
    np.testing.assert_allclose(outs[0][1], s * 0.64, rtol=1e-5)
    for out in outs[1:]:
        assert out[3].tobytes() == outs[0][3].tobytes()
