# ===- test_math_accuracy.py - atan/atan2 ulps, exact round/copysign -------=== #
#
# corpus/arctangent.mlir on the default device against float64 NumPy,
# measured in f32 ulps of the exact result. On SPIR-V both functions are
# Nabla's expansion (AccurateArctangent.cpp, ~3 ulp, CUDA's atanf/atan2f are
# within 2-3); lavapipe's own Atan was off by ~350 ulp (difftest seed 62486).
# Special values follow IEEE 754 / C's atan2: signed zeros, infinities in
# every quadrant, NaN propagation. round and copysign (corpus/sign_rounding.mlir)
# must be bit-exact in f32 and f64.
# ===----------------------------------------------------------------------=== #
import numpy as np
import pytest

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


def round_half_away(x):
    """C's round(): halfway cases away from zero, exact in any precision."""
    mag = np.abs(x)
    whole = np.floor(mag)
    with np.errstate(invalid="ignore"):  # inf - inf
        return np.copysign(whole + (mag - whole >= 0.5), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_and_copysign_edge_values(tmp_path, dtype):
    """Bit-exact round and copysign, signed zeros and NaN signs included
    (SPIR-V: the select forms that replaced upstream's mask-and-or)."""
    big = 2.0 ** (np.finfo(dtype).nmant)
    edges = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, -1.6727948,
             np.nextafter(dtype(0.5), dtype(0)), 0.49999997, big - 0.5,
             big + 1, -(big + 1), 1e30, -1e-30, np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(11)
    x = np.concatenate([edges, rng.uniform(-100, 100, 200)]).astype(dtype)
    s = np.concatenate([np.tile([1.0, -1.0, 0.0, -0.0], 5)[:len(edges)],
                        rng.choice([-3.0, 2.0], 200)]).astype(dtype)
    n = len(x)
    kernel = "sign_f32" if dtype == np.float32 else "sign_f64"
    out = launch(tmp_path, "sign_rounding.mlir", kernel, (n + 63) // 64, 64,
                 [x, s, np.zeros(n, dtype), np.zeros(n, dtype), f"index:{n}"])
    rounded, signed = out[2], out[3]
    want_round = round_half_away(x)
    finite = ~np.isnan(x)
    np.testing.assert_array_equal(rounded[finite], want_round[finite])
    np.testing.assert_array_equal(np.signbit(rounded[finite]),
                                  np.signbit(want_round[finite]))
    assert np.isnan(rounded[~finite]).all()
    want_sign = np.copysign(x, s)
    np.testing.assert_array_equal(signed[finite], want_sign[finite])
    np.testing.assert_array_equal(np.signbit(signed), np.signbit(want_sign))
