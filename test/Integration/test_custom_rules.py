# ===- test_custom_rules.py - Custom derivative rules run in kernels -----=== #
#
# corpus/custom_rules.mlir registers straight-through rules for floor inside
# its gpu.module; the gradient and tangent kernels must use them (floor's own
# derivative is 0, the rules pass the seed through), on the default device.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import numpy as np

from test_run_kernels import launch

N = 100


def inputs():
    rng = np.random.default_rng(7)
    return rng.uniform(-3, 3, N).astype(np.float32), rng.uniform(-1, 1, N).astype(np.float32)


def test_reverse_rule_is_used(tmp_path):
    x, w = inputs()
    out = launch(tmp_path, "custom_rules.mlir", "grad", 2, 64,
                 [x, np.zeros(N, np.float32), np.zeros(N, np.float32), w.copy(),
                  f"index:{N}"])
    # d/dx [ste(2x) x] with ste' = 1: 2x + floor(2x).
    expected = w * (2 * x + np.floor(2 * x))
    np.testing.assert_allclose(out[1], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[3], 0)  # the output's seed is consumed


def test_forward_rule_is_used(tmp_path):
    x, t = inputs()
    out = launch(tmp_path, "custom_rules.mlir", "tangent", 2, 64,
                 [x, t, np.zeros(N, np.float32), np.zeros(N, np.float32), f"index:{N}"])
    np.testing.assert_allclose(out[2], np.floor(2 * x) * x, rtol=1e-6)
    np.testing.assert_allclose(out[3], t * (2 * x + np.floor(2 * x)), rtol=1e-5, atol=1e-6)
