# ===- test_gradients_subgroup.py - Shuffles and subgroup reductions -----=== #
#
# Reverse and forward mode through subgroup operations (f32) on the default
# device, with the subgroup size read from the device: gpu.shuffle xor (a
# butterfly), down/up (neighbours) and idx (a many-to-one gather whose adjoint
# scatters), gpu.subgroup_reduce add, maximumf with ties (the lowest lane wins)
# and mul with zeros, from gradients/parallel.mlir and collectives.mlir.
# Checked against analytic gradients and tangents and the dot-product test.
# Helpers: gradient_helpers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np

from gradient_helpers import (RNG, device_subgroup_size, others_product,
                              run_collective, run_pair)


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
