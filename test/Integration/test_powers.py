# ===- test_powers.py - x^n with a run-time integer exponent -------------=== #
#
# math.fpowi with the exponent in a buffer (corpus/fpowi_runtime.mlir) on the
# default device: f64 and f32 against a NumPy model of compiler-rt's
# __powidf2 (binary exponentiation, what the CPU back ends call), bit for
# bit where only multiplications are involved (n >= 0; Vulkan's division is
# not required to be correctly rounded), and the reverse mode's n x^(n-1).
# Edge values: zero and negative bases, n = 0, INT32_MIN and INT32_MAX,
# overflow to inf and underflow to 0.
# ===----------------------------------------------------------------------=== #
import numpy as np

from test_run_kernels import launch

INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1


def powi(x, n, dtype):
    """compiler-rt's __powidf2 / __powisf2 in `dtype` arithmetic."""
    x, r, e = dtype(x), dtype(1), abs(int(n))
    with np.errstate(over="ignore", divide="ignore"):
        return _powi(x, r, e, n, dtype)


def _powi(x, r, e, n, dtype):
    while True:
        if e & 1:
            r = dtype(r * x)
        e >>= 1
        if e == 0:
            break
        x = dtype(x * x)
    return dtype(dtype(1) / r) if n < 0 else r


def cases():
    rng = np.random.default_rng(11)
    x = list(rng.uniform(-2, 2, 150)) + [0.0, -0.0, 1.0, -1.0, -1.0, 1.0,
                                         2.0, 2.0, 0.5, -3.0, 0.0, 1.5]
    n = list(rng.integers(-6, 10, 150)) + [0, 3, INT_MIN, INT_MIN, INT_MAX,
                                           INT_MAX, 1100, -1100, 0, 7, -1,
                                           64]
    return np.array(x), np.array(n, np.int32)


def check(out, expected, n, rtol):
    exact = n >= 0
    np.testing.assert_array_equal(out[exact], expected[exact])
    np.testing.assert_allclose(out[~exact], expected[~exact], rtol=rtol)


def test_runtime_exponents(tmp_path):
    x, n = cases()
    for dtype, kernel, rtol in [(np.float64, "pow_f64", 1e-15),
                                (np.float32, "pow_f32", 3e-7)]:
        X = x.astype(dtype)
        out = launch(tmp_path / kernel, "fpowi_runtime.mlir", kernel, 3, 64,
                     [X, n, np.zeros(len(X), dtype), f"index:{len(X)}"])
        expected = np.array([powi(a, b, dtype) for a, b in zip(X, n)], dtype)
        check(out[2], expected, n, rtol)


def test_reverse_mode(tmp_path):
    # dX = dY * n x^(n-1); away from x = 0 and from huge exponents.
    x, n = cases()
    keep = (np.abs(x) > 0.1) & (np.abs(n.astype(np.int64)) < 20)
    x, n = x[keep], n[keep]
    seed = np.random.default_rng(5).uniform(-1, 1, len(x))
    out = launch(tmp_path, "fpowi_runtime.mlir", "pow_f64_grad", 3, 64,
                 [x, np.zeros(len(x)), n, np.zeros(len(x)), seed.copy(),
                  f"index:{len(x)}"])
    expected = seed * n * np.array([powi(a, b - 1, np.float64)
                                    for a, b in zip(x, n)])
    np.testing.assert_allclose(out[1], expected, rtol=1e-13, atol=1e-300)
