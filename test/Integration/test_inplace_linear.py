# ===- test_inplace_linear.py - In-place sums in loops ---------------=== #
#
# frontends/inplace_linear.cu: cuda-samples-style loops that update memory
# in place with sums and differences only (scalarProd's accumulator tree in
# a grid-stride loop over vectors, a Walsh-Hadamard transform's butterflies
# in shared memory over a run-time number of stages), compiled by clang-22
# at -O1/-O2/-O3 during the run: primal against float64 NumPy, the Enzyme
# gradient (a linear map: J^T w) against NumPy's transpose, on lavapipe.
# ===----------------------------------------------------------------------=== #
import numpy as np
import pytest

from frontend_helpers import check, compile_cuda, f32, needs_cuda_headers, run

RNG = np.random.default_rng(1807)
OPTS = [1, 2, 3]


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("vectors,elements,grid,block",
                         [(5, 200, 2, 32), (3, 64, 3, 64), (1, 1, 1, 16),
                          (4, 130, 1, 128)])
def test_scalar_products(tmp_path, opt, vectors, elements, grid, block):
    ll = compile_cuda(tmp_path, "inplace_linear", opt)
    a = RNG.uniform(-1, 1, (vectors, elements))
    b = RNG.uniform(-1, 1, (vectors, elements))
    out = run(tmp_path, ll, "scalar_prod_kernel", grid, block,
              [f32(np.zeros(vectors)), f32(a.ravel()), f32(b.ravel()),
               f"i32:{vectors}", f"i32:{elements}"])
    check(out[0], (a * b).sum(axis=1), rtol=1e-4, atol=1e-4)
    w = RNG.standard_normal(vectors)
    zero = np.zeros(vectors * elements)
    out = run(tmp_path, ll, "grad_scalar_prod", grid, block,
              [f32(np.zeros(vectors)), f32(w), f32(a.ravel()), f32(zero),
               f32(b.ravel()), f32(zero), f"i32:{vectors}",
               f"i32:{elements}"])
    check(out[3].reshape(vectors, elements), w[:, None] * b, rtol=1e-4,
          atol=1e-5)
    check(out[5].reshape(vectors, elements), w[:, None] * a, rtol=1e-4,
          atol=1e-5)
    np.testing.assert_array_equal(out[1], 0)  # C's shadow consumed


def hadamard(log2n):
    h = np.array([[1.0]])
    for _ in range(log2n):
        h = np.block([[h, h], [h, -h]])
    return h


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("log2n,rows,block", [(0, 2, 8), (1, 1, 8), (5, 3, 8),
                                              (8, 2, 64)])
def test_walsh_butterflies(tmp_path, opt, log2n, rows, block):
    ll = compile_cuda(tmp_path, "inplace_linear", opt)
    n = 1 << log2n
    x = RNG.uniform(-1, 1, (rows, n))
    out = run(tmp_path, ll, "walsh_kernel", rows, block,
              [f32(x.ravel()), f"i32:{log2n}"])
    h = hadamard(log2n)  # these butterflies give the natural order
    check(out[0].reshape(rows, n), x @ h, rtol=1e-4, atol=1e-4)
    w = RNG.standard_normal((rows, n))
    out = run(tmp_path, ll, "grad_walsh", rows, block,
              [f32(x.ravel()), f32(w.ravel()), f"i32:{log2n}"])
    # The transform is symmetric: J^T w = H w.
    check(out[1].reshape(rows, n), w @ hadamard(log2n), rtol=1e-4, atol=1e-4)
