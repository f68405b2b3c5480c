# ===- cases.py - Kernels with generated and hand-written adjoints -------=== #
#
# One Case per kernel of the hand-written anchor: the primal kernel and the
# adjoint Nabla generates (both in bench/gradients/kernels.mlir), the
# hand-written adjoint kernels (bench/handwritten/adjoints.mlir, run in order
# on the same buffers; their parameters are the generated adjoint's), the
# launch shape and the arguments. Shared by the benchmark (bench/run.py,
# large sizes) and the check that the two adjoints agree
# (test/Integration/test_handwritten_adjoints.py, small sizes). Arguments are
# numpy arrays (buffers) or (type, value) pairs (scalars); adjoint arguments
# put each dup buffer's shadow right after it, holding a random cotangent of
# the final state (outputs) or a random initial gradient (inputs, which
# accumulate).
# ===----------------------------------------------------------------------=== #
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRIMALS = os.path.join(ROOT, "bench", "gradients", "kernels.mlir")
HANDWRITTEN = os.path.join(ROOT, "bench", "handwritten", "adjoints.mlir")
ROW = 64  # threads per block of the 1-D kernels, elements per row


class Case:
    """A kernel, its generated adjoint and its hand-written adjoint.

    `size` is a case's one size parameter: elements (elementwise kernels),
    rows or blocks of 64 (block-level kernels), the matrix order (matmul), or
    (threads, trip count) for the runtime-bounded loop."""

    def __init__(self, name, primal, generated, handwritten, block, grid, make,
                 test_size, bench_size, label=None):
        self.name, self.primal, self.generated = name, primal, generated
        self.handwritten, self.block, self.grid = handwritten, block, grid
        self.make, self.test_size, self.bench_size = make, test_size, bench_size
        self.label = label or name

    def arguments(self, size, rng):
        """(primal arguments, adjoint arguments) for `size`."""
        return self.make(size, rng)


def _uniform(rng, n, low=-1.0, high=1.0):
    return rng.uniform(low, high, n).astype(np.float32)


def _normal(rng, n):
    return rng.standard_normal(n).astype(np.float32)


def _pair(rng, n, m=None):
    """x (read), y (written) and their shadows."""
    m = n if m is None else m
    x, y = _uniform(rng, n, -2, 2), np.zeros(m, np.float32)
    return [x, y], [x, _normal(rng, n), y, _normal(rng, m)]


def _saxpy(n, rng):
    x, y = _uniform(rng, n), _uniform(rng, n)
    scalars = [("f32", 1.5), ("index", n)]
    return [x, y] + scalars, [x, _normal(rng, n), y, _normal(rng, n)] + scalars


def _elementwise(n, rng):
    primal, adjoint = _pair(rng, n)
    return primal + [("index", n)], adjoint + [("index", n)]


def _histogram(n, rng):
    x = _uniform(rng, n, -4, 4)
    bins = np.zeros(64, np.float32)
    scalars = [("f32", 0.75), ("index", n)]
    return [x, bins] + scalars, [x, _normal(rng, n), bins, _normal(rng, 64)] + scalars


def _rloop(size, rng):
    n, m = size
    primal, adjoint = _pair(rng, n)
    primal[0] = adjoint[0] = _uniform(rng, n)  # |x| <= 1: a bounded iteration
    scalars = [("index", n), ("index", m)]
    return primal + scalars, adjoint + scalars


def _rows(rows, rng):
    return _pair(rng, rows * ROW)


def _blocksum(blocks, rng):
    return _pair(rng, blocks * ROW, blocks)


def _matmul(n, rng):
    a, b = _uniform(rng, n * n), _uniform(rng, n * n)
    c = np.zeros(n * n, np.float32)
    return ([a, b, c, ("index", n)],
            [a, _normal(rng, n * n), b, _normal(rng, n * n), c, _normal(rng, n * n),
             ("index", n)])


def _blocks(count):
    return ((count + ROW - 1) // ROW,)


CASES = [
    Case("saxpy", "saxpy_primal", "saxpy_grad", ["saxpy_adj"], (ROW,), _blocks,
         _saxpy, 1000, 1 << 20),
    Case("poly", "poly_primal", "poly_grad", ["poly_adj"], (ROW,), _blocks,
         _elementwise, 1000, 1 << 20),
    Case("stencil", "stencil_primal", "stencil_grad",
         ["stencil_adj_gather", "stencil_adj_zero"], (ROW,), _blocks, _elementwise,
         1000, 1 << 20),
    Case("histogram", "histogram_primal", "histogram_grad", ["histogram_adj"],
         (ROW,), _blocks, _histogram, 1000, 1 << 20),
    Case("rloop", "rloop_primal", "rloop_grad", ["rloop_adj"], (ROW,),
         lambda size: _blocks(size[0]), _rloop, (200, 7), (1 << 14, 100),
         label="loop(m)"),
    Case("blocksum", "blocksum", "blocksum_adjoint", ["blocksum_adj"], (ROW,),
         lambda blocks: (blocks,), _blocksum, 4, 1 << 14),
    Case("softmax", "softmax", "softmax_adjoint", ["softmax_adj"], (ROW,),
         lambda rows: (rows,), _rows, 4, 1 << 14),
    Case("layernorm", "layernorm", "layernorm_adjoint", ["layernorm_adj"], (ROW,),
         lambda rows: (rows,), _rows, 4, 1 << 14),
    Case("matmul", "matmul", "matmul_adjoint",
         ["matmul_adj_da", "matmul_adj_db", "matmul_adj_zero"], (16, 16),
         lambda n: (n // 16, n // 16), _matmul, 32, 256),
]
