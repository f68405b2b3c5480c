# ===- test_torch.py - Kernels as torch.autograd.Functions ---------------=== #
#
# nabla.torch.function: torch.autograd.gradcheck on an elementwise kernel,
# a row reduction and a kernel reading a relocated object (float64 with
# gradcheck's own tolerances, float32 with looser ones; small tensors, since
# gradcheck launches the kernel twice per input element and the adjoint once
# per output element, and fast_mode for a larger one); the argument checks;
# a small network trained with Nabla kernels inside
# (examples/python/torch_training.py). Skipped without PyTorch.
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

import nabla

torch = pytest.importorskip(
    "torch", reason="nabla.torch needs PyTorch: Debian's python3-torch "
                    "(scripts/install-deps.sh installs it)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = open(os.path.join(ROOT, "examples", "mul_kernel.mlir")).read()
needs_cuda_headers = pytest.mark.skipif(
    not os.path.isdir("/usr/local/cuda/include") and "CUDA_PATH" not in os.environ,
    reason="clang's CUDA mode needs the CUDA toolkit headers")
RELOCATED = open(os.path.join(ROOT, "test", "Integration", "gradients",
                              "relocated.mlir")).read()

# y = x^2 w + x / (1 + w^2) elementwise (a new output y), and per row of X:
# y[r] = sum_c X[r, c]^2 w[c] (one thread per row, a loop over the columns).
KERNELS = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @blend(%x: memref<?xf64>, %w: memref<?xf64>, %y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf64>
        %b = memref.load %w[%i] : memref<?xf64>
        %ab = arith.mulf %a, %b : f64
        %aab = arith.mulf %ab, %a : f64
        %one = arith.constant 1.0 : f64
        %bb = arith.mulf %b, %b : f64
        %d = arith.addf %one, %bb : f64
        %q = arith.divf %a, %d : f64
        %r = arith.addf %aab, %q : f64
        memref.store %r, %y[%i] : memref<?xf64>
      }
      gpu.return
    }
    gpu.func @rows(%X: memref<?x?xf64>, %w: memref<?xf64>, %y: memref<?xf64>) kernel {
      %r = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %nrows = memref.dim %X, %c0 : memref<?x?xf64>
      %ncols = memref.dim %X, %c1 : memref<?x?xf64>
      %in = arith.cmpi ult, %r, %nrows : index
      scf.if %in {
        %zero = arith.constant 0.0 : f64
        %s = scf.for %c = %c0 to %ncols step %c1 iter_args(%acc = %zero) -> (f64) {
          %x = memref.load %X[%r, %c] : memref<?x?xf64>
          %wc = memref.load %w[%c] : memref<?xf64>
          %x2 = arith.mulf %x, %x : f64
          %t = arith.mulf %x2, %wc : f64
          %a = arith.addf %acc, %t : f64
          scf.yield %a : f64
        }
        memref.store %s, %y[%r] : memref<?xf64>
      }
      gpu.return
    }
  }
}"""


@pytest.fixture(scope="module")
def kernels():
    return nabla.Module.parse(KERNELS)


def blend_function(module):
    # y is new (the shape of x); n is computed from x.
    return nabla.torch.function(
        module, "blend", outputs={"y": lambda x, w: x.shape},
        scalars={"n": lambda x, w: x.numel()},
        grid=lambda x, w: (x.numel() + 63) // 64, block=64)


def test_gradcheck_elementwise(kernels):
    blend = blend_function(kernels)
    assert blend.inputs == ["x", "w"] and blend.outputs == ["y"]
    x = torch.randn(16, dtype=torch.float64, requires_grad=True)
    w = torch.randn(16, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(blend, (x, w))
    # Several blocks; gradcheck's fast mode (random projections).
    x = torch.randn(1000, dtype=torch.float64, requires_grad=True)
    w = torch.randn(1000, dtype=torch.float64, requires_grad=True)
    xd, wd = x.detach(), w.detach()
    torch.testing.assert_close(blend(x, w), xd * xd * wd + xd / (1 + wd * wd))
    assert torch.autograd.gradcheck(blend, (x, w), fast_mode=True)
    # Only the inputs that need a gradient get one.
    x.grad = None
    blend(x, wd).sum().backward()
    torch.testing.assert_close(x.grad, 2 * xd * wd + 1 / (1 + wd * wd))


@pytest.mark.filterwarnings("ignore:Input #0 requires gradient and is not a double")
def test_gradcheck_float32_with_tolerances():
    # The seed kernel squares A in place: A is an input and an output.
    m = nabla.Module.parse(SEED)
    square = nabla.torch.function(m, "mul_kernel", outputs=["A"],
                                  grid=lambda A, n: (n + 63) // 64, block=64)
    x = torch.linspace(-2, 2, 24, requires_grad=True)
    assert torch.autograd.gradcheck(square, (x, x.numel()), eps=1e-2,
                                    atol=1e-3, rtol=1e-3)
    x = torch.linspace(-2, 2, 300, requires_grad=True)
    x_before = x.detach().clone()
    y = square(x, x.numel())
    torch.testing.assert_close(x.detach(), x_before)   # inputs untouched
    (y * torch.arange(300.0)).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x_before * torch.arange(300.0))


def test_gradcheck_row_reduction(kernels):
    rows = nabla.torch.function(kernels, "rows",
                                outputs={"y": lambda X, w: X.shape[:1]},
                                grid=lambda X, w: (X.shape[0] + 63) // 64,
                                block=64)
    X = torch.randn(70, 6, dtype=torch.float64)
    w = torch.randn(6, dtype=torch.float64)
    torch.testing.assert_close(rows(X, w), (X ** 2) @ w)
    X = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(rows, (X, w))


def test_gradcheck_relocated_object():
    # f_kernel reads a host table through a relocation record: relocs= binds
    # it for the kernel and its adjoint (a constant: no gradient).
    table = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    f = nabla.torch.function(nabla.Module.parse(RELOCATED), "f_kernel",
                             outputs=["A"], scalars={"n": lambda A: A.numel()},
                             grid=1, block=64, relocs={"host.table": table})
    A = torch.randn(12, dtype=torch.float64, requires_grad=True)
    t = table.repeat(3)
    torch.testing.assert_close(f(A), A.detach() ** 2 * t + A.detach())
    assert torch.autograd.gradcheck(f, (A,))


def test_named_adjoint_and_kernel_object():
    # A nabla.Kernel stands for module and kernel; adjoint= names the
    # module's own gradient kernel (a shadow after A).
    m = nabla.Module.parse(SEED)
    square = nabla.torch.function(m.kernel("mul_kernel"), outputs=[0],
                                  adjoint="grad_mul_kernel",
                                  grid=lambda A, n: (n + 63) // 64, block=64)
    x = torch.linspace(-1, 1, 50, requires_grad=True)
    square(x, 50).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())
    assert square.adjoint.name == "grad_mul_kernel"


def test_argument_checks(kernels):
    blend = blend_function(kernels)
    x = torch.randn(8, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"argument 'w' \(memref<\?xf64>\) "
                                        r"expects a tensor of dtype torch.float64, "
                                        r"got torch.float32"):
        blend(x, x.float())
    rows = nabla.torch.function(kernels, "rows", outputs={"y": (4,)},
                                grid=1, block=64)
    with pytest.raises(ValueError, match=r"argument 'X' \(memref<\?x\?xf64>\) "
                                         r"does not accept shape \(8,\)"):
        rows(x, x[:2])
    with pytest.raises(TypeError, match=r"takes 2 arguments \(x, w\), got 1"):
        blend(x)
    with pytest.raises(TypeError, match="expects a tensor, got ndarray"):
        blend(x, x.numpy())
    with pytest.raises(ValueError, match="'z', which is not a parameter"):
        nabla.torch.function(kernels, "blend", outputs=["z"], grid=1, block=64)
    with pytest.raises(ValueError, match="is a scalar; outputs are buffers"):
        nabla.torch.function(kernels, "blend", outputs=["n"], grid=1, block=64)
    with pytest.raises(ValueError, match="scalars names .* a buffer"):
        nabla.torch.function(kernels, "blend", outputs=["y"],
                             scalars={"x": len}, grid=1, block=64)
    wrong = nabla.torch.function(kernels, "blend", outputs=["y"],
                                 adjoint="rows", grid=1, block=64)
    with pytest.raises(ValueError, match="adjoint 'rows' takes 3 parameters"):
        wrong.adjoint


def test_tensors_of_any_rank_for_1d_memrefs(kernels):
    # A 1-D memref (a C++ pointer) takes a tensor of any shape, flat, as
    # nabla.run takes N-D arrays; results and gradients keep the shape.
    blend = blend_function(kernels)
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    y = blend(x, w)
    assert y.shape == (3, 5)
    assert torch.autograd.gradcheck(blend, (x, w))


@needs_cuda_headers
def test_cuda_source_to_torch():
    # From CUDA source to a checked gradient and a torch function: the
    # nabla.cuda.Kernel stands for module and kernel in both.
    square = nabla.cuda.Kernel(r"""
    __global__ void square(float *A, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) A[i] = A[i] * A[i];
    }""", "square")
    a = np.linspace(-2, 2, 1000, dtype=np.float32)
    report = nabla.check_gradient(square, grid=4, block=256, args=[a, 1000],
                                  dup=[0])
    assert report["ok"], report
    assert str(report).startswith("check_gradient(square, its generated adjoint): ok")
    f = nabla.torch.function(square, outputs=["A"],
                             grid=lambda A, n: (n + 255) // 256, block=256)
    assert repr(f) == "<nabla.torch.function square(A, n) -> A>"
    x = torch.randn(1000, requires_grad=True)
    f(x, x.numel()).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())


def test_import_nabla_without_torch():
    # `import nabla` never imports torch; nabla.torch says what is missing.
    code = ("import sys; sys.modules['torch'] = None\n"
            "import nabla\n"
            "assert 'nabla.torch' not in sys.modules\n"
            "try:\n"
            "    nabla.torch\n"
            "except ImportError as error:\n"
            "    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, env=os.environ, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "nabla.torch needs PyTorch (Debian's python3-torch" in result.stdout


def test_training_example():
    # A torch.nn.Module with Nabla kernels inside: the loss falls.
    example = runpy.run_path(os.path.join(ROOT, "examples", "python",
                                          "torch_training.py"))
    losses = example["train"](steps=15)
    assert losses[-1] < 0.5 * losses[0], losses
    # The layer's gradients are torch.nn.functional.linear's.
    layer = example["NablaLinear"](5, 3)
    x = torch.randn(7, 5, requires_grad=True)
    seed = torch.randn(7, 3)
    (layer(x) * seed).sum().backward()
    grads = [x.grad, layer.weight.grad, layer.bias.grad]
    x2 = x.detach().clone().requires_grad_()
    w2 = layer.weight.detach().clone().requires_grad_()
    b2 = layer.bias.detach().clone().requires_grad_()
    (torch.nn.functional.linear(x2, w2, b2) * seed).sum().backward()
    for ours, reference in zip(grads, [x2.grad, w2.grad, b2.grad]):
        torch.testing.assert_close(ours, reference, rtol=1e-5, atol=1e-5)


BF16_CUBE = open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "bf16_cube.mlir")).read()


def test_bfloat16_tensors():
    """torch.bfloat16 tensors in and out (numpy has no bfloat16: they travel
    as their bits); the backward pass is the generated bf16 adjoint."""
    cube = nabla.torch.function(nabla.Module.parse(BF16_CUBE), "cube",
                                outputs={"y": lambda x, n: (n,)},
                                grid=1, block=64)
    x = torch.linspace(-1.5, 1.5, 40, dtype=torch.bfloat16,
                       requires_grad=True)
    y = cube(x, 40)
    assert y.dtype == torch.bfloat16
    torch.testing.assert_close(y.float(), (x.detach().float() ** 3),
                               rtol=2 ** -7, atol=1e-6)
    w = torch.linspace(1, 2, 40, dtype=torch.bfloat16)
    (y * w).sum().backward()
    assert x.grad.dtype == torch.bfloat16
    expected = (w.float() * 3 * x.detach().float() ** 2)
    torch.testing.assert_close(x.grad.float(), expected, rtol=2 ** -6,
                               atol=1e-2)
