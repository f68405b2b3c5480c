# ===- test_loops.py - Loops of every shape, differentiated and run ------=== #
#
# The kernels of gradients/loops.mlir on the default device (lavapipe without
# a GPU): for each loop shape and trip count, reverse mode against central
# finite differences in float64 of <M(s), w> (M maps the initial X, Y to the
# final X, Y), and the dot-product test <J v, w> = <v, J^T w> against forward
# mode. Trip counts include zero and one.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np
import pytest

from gradient_helpers import launch

RNG = np.random.default_rng(11)
FILE = "loops.mlir"
N, BLOCK, GRID = 100, 64, 2


class LoopMap:
    """M(X, Y) of the kernel family `name` with scalar parameters `scalars`
    (after the buffers) and optional constant buffers `extra`."""

    def __init__(self, tmp_path, name, scalars, extra=()):
        self.tmp, self.name = tmp_path, name
        self.scalars, self.extra = list(scalars), list(extra)
        self.X = RNG.uniform(-1, 1, N)
        self.Y = RNG.uniform(-1, 1, N)

    def primal(self, X, Y, tag):
        out = launch(self.tmp / tag, FILE, f"{self.name}_kernel", GRID, BLOCK,
                     [X, Y] + self.extra + self.scalars)
        return out[0], out[1]

    def derivative(self, kind, sX, sY):
        out = launch(self.tmp / kind, FILE, f"{self.name}_{kind}", GRID, BLOCK,
                     [self.X, sX.copy(), self.Y, sY.copy()] + self.extra +
                     self.scalars)
        return out[1], out[3]

    def check(self, tangent=True):
        vX, vY = RNG.standard_normal(N), RNG.standard_normal(N)
        wX, wY = RNG.standard_normal(N), RNG.standard_normal(N)
        eps = 1e-6
        Xp, Yp = self.primal(self.X + eps * vX, self.Y + eps * vY, "plus")
        Xm, Ym = self.primal(self.X - eps * vX, self.Y - eps * vY, "minus")
        fd = (np.dot(Xp - Xm, wX) + np.dot(Yp - Ym, wY)) / (2 * eps)
        gX, gY = self.derivative("grad", wX, wY)
        ad = np.dot(vX, gX) + np.dot(vY, gY)
        assert np.isclose(ad, fd, rtol=1e-5, atol=1e-7), (self.name, ad, fd)
        if tangent:
            jX, jY = self.derivative("tangent", vX, vY)
            lhs = np.dot(jX, wX) + np.dot(jY, wY)
            assert np.isclose(lhs, ad, rtol=1e-10, atol=1e-12), (lhs, ad)
        return gX, gY


@pytest.mark.parametrize("m", [0, 1, 7, 1000])
def test_runtime_trip_count_inside_bounds_check(tmp_path, m):
    LoopMap(tmp_path, "dyn", [f"index:{N}", f"index:{m}"]).check()


@pytest.mark.parametrize("name,m", [("nest2", 0), ("nest2", 1), ("nest2", 7),
                                    ("nest3", 1), ("nest3", 5),
                                    ("loop_if_loop", 6),
                                    ("static_outer", 0), ("static_outer", 9)])
def test_nested_dynamic_loops(tmp_path, name, m):
    LoopMap(tmp_path, name, [f"index:{N}", f"index:{m}"]).check()


@pytest.mark.parametrize("m", [0, 1, 7])
def test_element_overwritten_in_place_every_iteration(tmp_path, m):
    LoopMap(tmp_path, "inplace", [f"index:{N}", f"index:{m}"]).check()


def test_while_storing_each_iteration_with_per_thread_trip_counts(tmp_path):
    # 0, 1 and several iterations in one launch.
    counts = np.array([0, 1, 2, 5, 1, 0, 9], np.int32)[np.arange(N) % 7]
    gX, _ = LoopMap(tmp_path, "stored_while", [f"index:{N}"],
                    extra=[counts]).check()
    assert np.all(np.isfinite(gX))


def test_trip_count_hint_taped_and_exceeded(tmp_path):
    LoopMap(tmp_path / "within", "hinted", [f"index:{N}", "index:3"]).check()
    # 6 iterations against a hint of 4: detected, the gradient is NaN.
    m = LoopMap(tmp_path / "over", "hinted", [f"index:{N}", "index:6"])
    gX, gY = m.derivative("grad", RNG.standard_normal(N),
                          RNG.standard_normal(N))
    assert np.all(np.isnan(gX)) and np.all(np.isnan(gY))


@pytest.mark.parametrize("m", [0, 1, 5])
def test_uniform_loop_with_barriers_in_kernel_adjoint(tmp_path, m):
    n = GRID * BLOCK
    X, Y = RNG.uniform(-1, 1, n), np.zeros(n)
    wY = RNG.standard_normal(n)
    v = RNG.standard_normal(n)
    eps = 1e-6

    def primal(x, tag):
        return launch(tmp_path / tag, FILE, "ring", GRID, BLOCK,
                      [x, Y, f"index:{m}"])[1]

    fd = np.dot(primal(X + eps * v, "p") - primal(X - eps * v, "m"), wY) / (2 * eps)
    out = launch(tmp_path / "adj", FILE, "ring_adjoint", GRID, BLOCK,
                 [X, np.zeros(n), Y, wY.copy(), f"index:{m}"])
    ad = np.dot(v, out[1])
    assert np.isclose(ad, fd, rtol=1e-5, atol=1e-8), (ad, fd)


def test_newton_while_with_data_dependent_trip_counts(tmp_path):
    # Threads whose loop runs 0, 1, 2 and 3 times in one launch (a trip count
    # of exactly one used to give a wrong gradient).
    m = LoopMap(tmp_path, "newton", [f"index:{N}", "index:0"])
    m.X[::10] = 0.7071  # a = 1.0000004: no iteration
    a = 0.5 + m.X ** 2
    v, trips = np.ones(N), np.zeros(N, int)
    while True:
        go = np.abs(v * v - a) > 1e-3
        if not go.any():
            break
        v[go] = 0.5 * (v[go] + a[go] / v[go])
        trips += go
    assert {0, 1, 2} <= set(trips.tolist()), trips
    _, Y = m.primal(m.X, m.Y, "check")
    np.testing.assert_allclose(Y, v, rtol=1e-12)
    gX, gY = m.check()
    # Y is only written: its shadow ends at zero.
    np.testing.assert_array_equal(gY, 0)
