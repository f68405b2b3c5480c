# ===- test_gradients_private_memory.py - Per-thread heap allocations ----=== #
#
# gradients/private_heap.mlir: a kernel that allocates a temporary per row
# with memref.alloc (as one-shot bufferization leaves one in a gpu.launch
# body) runs on the default device, and so does its gradient: the
# allocation became private memory, which reverse mode recomputes from.
# Checked against numpy's closed form. Helpers: gradient_helpers.py.
# ===----------------------------------------------------------------------=== #
import numpy as np

from gradient_helpers import RNG, launch

N, R, BLOCK = 70, 3, 64  # 70 threads over two workgroups, 3 rows each


def closed_form(X, W):
    rows = X.reshape(N, R, 4)
    return (rows ** 2 * W).sum(axis=(1, 2))


def test_heap_temporary_runs(tmp_path):
    X = RNG.uniform(-1, 1, N * R * 4).astype(np.float32)
    W = RNG.uniform(0.5, 2, 4).astype(np.float32)
    out = launch(tmp_path, "private_heap.mlir", "rows_kernel", 2, BLOCK,
                 [X, W, np.zeros(N, np.float32), f"index:{N}", f"index:{R}"])
    np.testing.assert_allclose(out[2], closed_form(X, W), rtol=1e-5)


def test_heap_temporary_gradient(tmp_path):
    X = RNG.uniform(-1, 1, N * R * 4).astype(np.float32)
    W = RNG.uniform(0.5, 2, 4).astype(np.float32)
    dY = RNG.uniform(-1, 1, N).astype(np.float32)
    out = launch(tmp_path, "private_heap.mlir", "rows_grad", 2, BLOCK,
                 [X, np.zeros_like(X), W, np.zeros(N, np.float32), dY.copy(),
                  f"index:{N}", f"index:{R}"])
    # dX[(i*R + r)*4 + k] = 2 * X * W[k] * dY[i]
    expected = (2 * X.reshape(N, R, 4) * W * dY[:, None, None]).ravel()
    np.testing.assert_allclose(out[1], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[3], closed_form(X, W), rtol=1e-5)
    # Reverse mode consumes the output's seed, as Enzyme does.
    assert not out[4].any()
