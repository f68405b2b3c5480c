# ===- test_math_accuracy.py - f32 atan/atan2 within a few ulp ------------=== #
#
# corpus/arctangent.mlir on the default device against float64 NumPy,
# measured in f32 ulps of the exact result. On SPIR-V both functions are
# Nabla's expansion (AccurateArctangent.cpp, ~3 ulp, CUDA's atanf/atan2f are
# within 2-3); lavapipe's own Atan was off by ~350 ulp (difftest seed 62486).
# Special values follow IEEE 754 / C's atan2: signed zeros, infinities in
# every quadrant, NaN propagation.
# ===----------------------------------------------------------------------=== #
import numpy as np

from test_run_kernels import launch

MAX_ULP = 3


def ulps(out, x64):
    """|out - exact| in units of the f32 spacing at the exact result."""
    exact = x64.astype(np.float32)
    return np.abs(out.astype(np.float64) - x64) / np.spacing(np.abs(exact))


def signed_values(rng, count):
    """Magnitudes spread over 1e-6..1e6 (no subnormal results: Vulkan may
    flush them), random signs, plus the reduction boundaries."""
    mags = 10.0 ** rng.uniform(-6, 6, count)
    mags = np.concatenate([mags, rng.uniform(0, 2, count),
                           [1.0, np.tan(np.pi / 8), 0.41421354, 0.41421357,
                            0.99999994, 1.0000001]])
    signs = rng.choice([-1.0, 1.0], len(mags))
    return (mags * signs).astype(np.float32)


def test_atan_ulp(tmp_path):
    x = signed_values(np.random.default_rng(3), 4000)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    X = np.concatenate([x, specials])
    n = len(X)
    out = launch(tmp_path, "arctangent.mlir", "atan_f32", (n + 63) // 64,
                 64, [X, np.zeros(n, np.float32), f"index:{n}"])[1]
    err = ulps(out[:len(x)], np.arctan(x.astype(np.float64)))
    assert err.max() <= MAX_ULP, (err.max(), x[err.argmax()])
    tail = out[len(x):]
    np.testing.assert_array_equal(np.signbit(tail[:2]), [False, True])
    assert tail[0] == 0 and tail[1] == 0
    np.testing.assert_allclose(tail[2:4], [np.pi / 2, -np.pi / 2], rtol=1e-7)
    assert np.isnan(tail[4])


def test_atan2_ulp(tmp_path):
    rng = np.random.default_rng(5)
    y = signed_values(rng, 3000)
    x = signed_values(rng, 3000)
    # One operand a power of ten away from the other, and equal magnitudes.
    y[:200] = x[:200] * np.float32(10.0) ** rng.integers(-5, 6, 200)
    y[200:300] = np.abs(x[200:300]) * rng.choice([-1, 1], 100)
    inf, nan = np.inf, np.nan
    special_pairs = [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0),
                     (1.0, 0.0), (-1.0, 0.0), (1.0, -0.0), (0.0, 1.0),
                     (0.0, -1.0), (-0.0, -1.0), (inf, inf), (inf, -inf),
                     (-inf, inf), (-inf, -inf), (inf, 1.0), (-inf, 1.0),
                     (1.0, inf), (1.0, -inf), (-1.0, -inf), (0.0, inf),
                     (nan, 1.0), (1.0, nan), (nan, nan), (inf, nan)]
    sy = np.array([p[0] for p in special_pairs], np.float32)
    sx = np.array([p[1] for p in special_pairs], np.float32)
    Y, X = np.concatenate([y, sy]), np.concatenate([x, sx])
    n = len(Y)
    out = launch(tmp_path, "arctangent.mlir", "atan2_f32", (n + 63) // 64,
                 64, [Y, X, np.zeros(n, np.float32), f"index:{n}"])[2]
    err = ulps(out[:len(y)],
               np.arctan2(y.astype(np.float64), x.astype(np.float64)))
    assert err.max() <= MAX_ULP, (err.max(), y[err.argmax()],
                                  x[err.argmax()])
    expected = np.arctan2(sy, sx)
    got = out[len(y):]
    nan_expected = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan_expected)
    np.testing.assert_allclose(got[~nan_expected], expected[~nan_expected],
                               rtol=1e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(got[~nan_expected]),
                                  np.signbit(expected[~nan_expected]))
