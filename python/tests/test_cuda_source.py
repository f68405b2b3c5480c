# ===- test_cuda_source.py - nabla.cuda: CUDA source in, Kernel out ------=== #
#
# CUDA (and HIP) source compiled by clang-22 through nabla.cuda, launched and
# differentiated through Enzyme's requests with the shipped enzyme.h, checked
# against numpy; clang's and the raise's errors at the source's line; kernels
# by their C++ names; parameter names from the source, LLVM IR and MLIR name
# locations; N-D arrays for 1-D memrefs; the signature in arity errors; and
# the package's namespace and version.
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os
import pathlib
import re
import signal
import subprocess
import warnings

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRONTENDS = os.path.join(ROOT, "test", "Integration", "frontends")
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))

needs_cuda_headers = pytest.mark.skipif(
    not os.path.isdir("/usr/local/cuda/include") and "CUDA_PATH" not in os.environ,
    reason="clang's CUDA mode needs the CUDA toolkit headers")

# y = x sin(x) per element; its reverse and forward modes through the shipped
# enzyme.h (no template argument: the return type defaults to void), and a
# scalar gradient returned by enzyme_out.
SOURCE = r"""
#include <enzyme.h>

__device__ void xsin(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * sinf(x[i]);
}

__global__ void xsin_kernel(const float *x, float *y, int n) { xsin(x, y, n); }

__global__ void xsin_reverse(const float *x, float *dx, float *y, float *dy,
                             int n) {
  __enzyme_autodiff((void *)xsin, enzyme_dup, x, dx, enzyme_dup, y, dy,
                    enzyme_const, n);
}

__global__ void xsin_tangent(const float *x, float *dx, float *y, float *dy,
                             int n) {
  __enzyme_fwddiff((void *)xsin, enzyme_dup, x, dx, enzyme_dup, y, dy,
                   enzyme_const, n);
}

__device__ float square_scaled(float a, float x) { return a * x * x; }

__global__ void grad_scale(float a, const float *x, float *da, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    da[i] = __enzyme_autodiff<float>((void *)square_scaled, enzyme_out, a,
                                     enzyme_const, x[i]);
}
"""


@pytest.fixture(scope="module")
def source_module():
    return nabla.cuda.module(SOURCE)


@needs_cuda_headers
def test_cuda_kernel_runs_and_differentiates(source_module):
    n = 100
    x = np.linspace(-2, 2, n).astype(np.float32)
    derivative = np.sin(x) + x * np.cos(x)

    primal = nabla.cuda.Kernel(SOURCE, "xsin_kernel")
    assert isinstance(primal, nabla.Kernel)
    _, y, _ = primal(x, np.zeros_like(x), n, grid=2, block=64)
    np.testing.assert_allclose(y, x * np.sin(x), rtol=1e-5, atol=1e-6)

    # Reverse mode: dy holds the cotangent w of y on entry, dx gets
    # w dy/dx added (x is only read); dy ends zero (y is overwritten).
    reverse = nabla.cuda.Kernel(SOURCE, "xsin_reverse")
    w = np.linspace(1, 2, n).astype(np.float32)
    _, dx, _, dy, _ = reverse(x, np.ones_like(x), np.zeros_like(x), w, n,
                              grid=2, block=64)
    np.testing.assert_allclose(dx, 1 + w * derivative, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dy, 0)

    # Forward mode, from the module compiled once.
    tangent = source_module.kernel("xsin_tangent")
    v = np.linspace(-1, 1, n).astype(np.float32)
    _, _, _, dy, _ = tangent(x, v, np.zeros_like(x), np.zeros_like(x), n,
                             grid=2, block=64)
    np.testing.assert_allclose(dy, v * derivative, rtol=1e-5, atol=1e-5)

    # enzyme_out: d(a x^2)/da = x^2, returned by the request.
    grad = source_module.kernel("grad_scale")
    _, _, da, _ = grad(3.0, x, np.zeros_like(x), n, grid=2, block=64)
    np.testing.assert_allclose(da, x * x, rtol=1e-6)


@needs_cuda_headers
def test_clang_error_names_the_source_line():
    source = ("__global__ void broken(float *a) {\n"
              "  int i = threadIdx.x;\n"
              "  a[i] = undeclared * 2;\n"
              "}\n")
    with pytest.raises(nabla.cuda.CompileError) as error:
        nabla.cuda.Kernel(source, "broken")
    assert "kernel.cu:3:10: error: use of undeclared identifier 'undeclared'" \
        in str(error.value)
    assert error.value.log.startswith("kernel.cu:3:10")
    with pytest.raises(nabla.cuda.CompileError, match=r"^scale\.cu:3:10: error"):
        nabla.cuda.Kernel(source, "broken", filename="scale.cu")


@needs_cuda_headers
def test_raise_error_names_the_source_line():
    # clang accepts it; Nabla cannot raise a clock read: a located MLIRError
    # that names the kernel's line, through the header function it calls.
    source = ("#include <enzyme.h>\n"
              "\n"
              "__global__ void timed(long long *t) {\n"
              "  t[0] = clock64();\n"
              "}\n")
    with pytest.raises(nabla.MLIRError) as error:
        nabla.cuda.Kernel(source, "timed")
    assert "(called from kernel.cu:4:10): error: cannot raise" in str(error.value)
    assert any(location.endswith("kernel.cu:4:10)")
               for _, location, _ in error.value.diagnostics)


@needs_cuda_headers
def test_only_the_named_kernel_is_raised():
    # A kernel Nabla cannot raise does not stop another one of the file.
    source = ("__global__ void timed(long long *t) { t[0] = clock64(); }\n"
              "__global__ void twice(float *a) { a[threadIdx.x] *= 2; }\n")
    twice = nabla.cuda.Kernel(source, "twice")
    out, = twice(np.arange(4, dtype=np.float32), grid=1, block=4)
    np.testing.assert_array_equal(out, [0, 2, 4, 6])


@needs_cuda_headers
def test_options_warnings_and_paths(tmp_path):
    source = ("__global__ void fill(float *a) { a[threadIdx.x] = VALUE; }\n")
    fill = nabla.cuda.Kernel(source, "fill", options=("-DVALUE=2.5f", "-O1"))
    np.testing.assert_array_equal(fill(np.zeros(3, np.float32), grid=1,
                                       block=3)[0], [2.5] * 3)
    with pytest.warns(nabla.cuda.CompileWarning, match=r"kernel.cu:1:.*warning"):
        warned = nabla.cuda.Kernel("#warning checking\n" + source, "fill",
                                   options=["-DVALUE=1.0f"])
    assert "warning: checking" in warned.log
    # A path: read, named by its path, its folder searched for its headers.
    (tmp_path / "value.h").write_text("#define VALUE 4.0f\n")
    (tmp_path / "fill.cu").write_text('#include "value.h"\n' + source)
    from_file = nabla.cuda.Kernel(tmp_path / "fill.cu", "fill")
    np.testing.assert_array_equal(from_file(np.zeros(2, np.float32), grid=1,
                                            block=2)[0], [4, 4])
    assert "target triple" in nabla.cuda.llvm_ir(tmp_path / "fill.cu")


@needs_cuda_headers
def test_missing_clang_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("NABLA_CLANG", "/nonexistent/clang")
    with pytest.raises(FileNotFoundError, match="NABLA_CLANG is set to "
                       "'/nonexistent/clang', which is not an executable"):
        nabla.cuda.Kernel(SOURCE, "xsin_kernel")


@needs_cuda_headers
def test_ctrl_c_stays_a_keyboard_interrupt():
    # Compiling installs the handlers that kill clang on an interrupt
    # (nabla/Support/ChildProcess.h); they hand SIGINT on to Python's.
    nabla.cuda.llvm_ir("__global__ void f(float *a) {}")
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


def test_hip_source():
    # HIP without ROCm: -nogpuinc, the source defines the HIP names itself.
    path = pathlib.Path(FRONTENDS, "hip_seed.hip")
    grad = nabla.cuda.Kernel(path, "grad_mulsin", language="hip")
    A = np.linspace(-1, 1, 40).astype(np.float32)
    _, dA, _ = grad(A, np.ones_like(A), 40, grid=1, block=64)
    np.testing.assert_allclose(dA, np.sin(A) + A * np.cos(A), rtol=1e-5,
                               atol=1e-6)


@needs_cuda_headers
def test_kernels_by_their_cpp_names():
    source = ("namespace ops {\n"
              "template <typename T> __global__ void twice(T *a) {\n"
              "  a[threadIdx.x] *= 2; }\n"
              "template __global__ void twice<float>(float *);\n"
              "template __global__ void twice<double>(double *);\n"
              "}\n"
              "__global__ void once(float *a) {}\n")
    module = nabla.Module.parse_llvm_ir(nabla.cuda.llvm_ir(source))
    for name in ("ops::twice<float>", "ops::twice<float>(float*)",
                 "void ops::twice<float>(float*)", "_ZN3ops5twiceIfEEvPT_"):
        kernel = module.kernel(name)
        assert kernel.name == "_ZN3ops5twiceIfEEvPT_"
    out, = module.kernel("ops::twice<double>")(np.ones(2), grid=1, block=2)
    np.testing.assert_array_equal(out, [2, 2])
    with pytest.raises(ValueError, match=r"'twice' names several kernels: "
                       r"_ZN3ops5twiceIdEEvPT_ \(void ops::twice<double>"):
        module.kernel("twice")
    with pytest.raises(ValueError, match=r"unknown kernel 'thrice' \(kernels: "
                       r".*_Z4oncePf \(once\(float\*\)\)"):
        module.kernel("thrice")
    # nabla.run takes the C++ name too.
    out, = nabla.run(module, "ops::twice<float>", 1, 2,
                     [np.ones(2, np.float32)])
    np.testing.assert_array_equal(out, [2, 2])


@needs_cuda_headers
def test_parameter_names_from_the_source(source_module):
    kernel = nabla.cuda.Kernel(SOURCE, "xsin_reverse")
    assert [p.name for p in kernel.parameters] == ["x", "dx", "y", "dy", "n"]
    assert [p.name for p in source_module.kernel("grad_scale").parameters] == \
        ["a", "x", "da", "n"]
    with pytest.raises(TypeError, match=r"xsin_kernel: parameter #2 'n' "
                       r"\(i32\) expects an integer, got float 1.5"):
        nabla.cuda.Kernel(SOURCE, "xsin_kernel")(
            np.zeros(2, np.float32), np.zeros(2, np.float32), 1.5, grid=1,
            block=2)
    # A byval struct's fields: name.0, name.1, ...
    with open(os.path.join(FRONTENDS, "devarray.cu")) as file:
        devarray = nabla.cuda.Kernel(file.read(), "scale_kernel",
                                     options=["-I", FRONTENDS])
    assert [p.name for p in devarray.parameters] == \
        ["a.0", "a.1", "b.0", "b.1", "s"]


def test_parameter_names_from_llvm_ir_and_mlir_locations():
    with open(os.path.join(FRONTENDS, "julia", "seed_v2.ll")) as file:
        module = nabla.Module.parse_llvm_ir(file.read())
    kernel = module.kernel("julia_grad_mul_kernel_1207")
    names = [p.name for p in kernel.parameters]
    assert names[:4] == ["A.0", "A.1", "A.2.0", "A.3"] and names[4] == "dA.0"
    # Name locations on a gpu.func's arguments name them, before SSA names.
    module = nabla.Module.parse("""
      gpu.module @k {
        gpu.func @axpy(%arg0: f32 loc("alpha"), %x: memref<?xf32>, %n: index) kernel {
          gpu.return
        }
      }""")
    assert [p.name for p in module.kernel("axpy").parameters] == \
        ["alpha", "x", "n"]
    assert [p.name for p in module.clone().kernel("axpy").parameters] == \
        ["alpha", "x", "n"]


@needs_cuda_headers
def test_arity_error_prints_the_signature(source_module):
    kernel = source_module.kernel("xsin_kernel")
    message = (r"kernel 'xsin_kernel' takes 3 arguments, got 2: "
               r"xsin_kernel\(x: memref<\?xf32>, y: memref<\?xf32>, n: i32\)")
    with pytest.raises(ValueError, match=message):
        kernel(np.zeros(2, np.float32), 2, grid=1, block=2)
    with pytest.raises(ValueError, match=message):
        nabla.run(source_module, "xsin_kernel", 1, 2,
                  [np.zeros(2, np.float32), 2])
    assert repr(nabla.cuda.Kernel(SOURCE, "xsin_kernel")) == (
        "<nabla.cuda.Kernel xsin_kernel(x: memref<?xf32>, y: memref<?xf32>, "
        "n: i32)>")


@needs_cuda_headers
def test_nd_arrays_for_1d_memrefs(source_module):
    kernel = source_module.kernel("xsin_kernel")
    x = np.linspace(-1, 1, 48).astype(np.float32).reshape(4, 3, 4)
    out_x, y, _ = kernel(x, np.zeros((6, 8), np.float32), x.size, grid=1,
                         block=64)
    assert out_x.shape == (4, 3, 4) and y.shape == (6, 8)
    np.testing.assert_allclose(y.ravel(), (x * np.sin(x)).ravel(), rtol=1e-5,
                               atol=1e-6)
    # Memory order: a transposed (Fortran-ordered) array has none to pass.
    with pytest.raises(ValueError, match=r"parameter #0 'x' \(memref<\?xf32>\): "
                       r"an array of shape \(3, 4\) .* must be C-contiguous"):
        kernel(np.zeros((4, 3), np.float32).T, np.zeros(12, np.float32), 12,
               grid=1, block=64)
    # A static 1-D memref takes as many elements, in any C-contiguous shape.
    fixed = nabla.Module.parse("""
      gpu.module @k {
        gpu.func @bump(%a: memref<6xf32>) kernel {
          %i = gpu.thread_id x
          %v = memref.load %a[%i] : memref<6xf32>
          %one = arith.constant 1.0 : f32
          %w = arith.addf %v, %one : f32
          memref.store %w, %a[%i] : memref<6xf32>
          gpu.return
        }
      }""").kernel("bump")
    out, = fixed(np.zeros((2, 3), np.float32), grid=1, block=6)
    np.testing.assert_array_equal(out, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"does not accept shape \(2, 4\) "
                       r"\(8 elements; the memref is memref<6xf32>\)"):
        fixed(np.zeros((2, 4), np.float32), grid=1, block=6)


def test_optional_buffer_takes_none():
    """A pointer the kernel tests for null (`if (bias != NULL)`) is an
    optional parameter: None launches the kernel's null branch, an array
    the other; its output is None. Other buffers still need an array."""
    source = open(os.path.join(FRONTENDS, "optional_bias.cu")).read()
    k = nabla.cuda.Kernel(source, "matmul_bias_forward")
    params = {p.name: p for p in k.parameters}
    assert params["bias"].optional and not params["weight"].optional
    rng = np.random.default_rng(5)
    rows, cols, outs = 9, 4, 3
    inp = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    weight = rng.uniform(-1, 1, (outs, cols)).astype(np.float32)
    bias = rng.uniform(-1, 1, outs).astype(np.float32)
    for b in (bias, None):
        out = k(np.zeros(rows * outs, np.float32), inp, weight, b, rows, cols,
                outs, grid=(1, 1), block=(16, 4))
        expected = inp @ weight.T + (0 if b is None else bias)
        np.testing.assert_allclose(out[0].reshape(rows, outs), expected,
                                   rtol=1e-5, atol=1e-6)
        assert (out[3] is None) == (b is None)
    with pytest.raises(TypeError, match="'weight'"):
        k(np.zeros(rows * outs, np.float32), inp, None, bias, rows, cols, outs,
          grid=(1, 1), block=(16, 4))
    with pytest.raises(ValueError, match=r"bias: memref<\?xf32> or None"):
        k(np.zeros(rows * outs, np.float32), grid=1, block=1)


@needs_cuda_headers
def test_optional_buffer_gradient_check():
    """check_gradient (a generated kernel adjoint) with an optional buffer
    left out and passed: the adjoint keeps the buffer's presence flag."""
    source = open(os.path.join(FRONTENDS, "optional_bias.cu")).read()
    k = nabla.cuda.Kernel(source, "affine_square_kernel")
    rng = np.random.default_rng(6)
    n = 100
    x, scale, bias = (rng.uniform(0.5, 1.5, n).astype(np.float32)
                      for _ in range(3))
    for s, dup in ((None, [0, 2, 3]), (scale, [0, 1, 2, 3])):
        report = nabla.check_gradient(
            k, grid=2, block=64, args=[x, s, bias, np.zeros(n, np.float32), n],
            dup=dup)
        assert report["ok"], report


def test_version_and_namespace():
    assert re.fullmatch(r"\d+\.\d+\.\d+", nabla.__version__)
    tool = os.path.join(BIN, "nabla-opt")
    if os.access(tool, os.X_OK):
        printed = subprocess.run([tool, "--version"], capture_output=True,
                                 text=True, check=True).stdout
        assert f"(Nabla) {nabla.__version__}" in printed
    public = {name for name in vars(nabla) if not name.startswith("_")}
    for leaked in ("np", "os", "json", "statistics", "importlib", "as_buffer",
                   "pack_scalar", "DeviceArray", "argument_names"):
        assert leaked not in public
    assert public <= set(nabla.__all__)
    assert {"Kernel", "Module", "run", "cuda", "Parameter"} <= public
    assert nabla.cuda.Kernel.__module__ == "nabla.cuda"


DYNAMIC_SHARED = r"""
// A block's sum of squares staged in extern __shared__, read back by
// thread 0; a causal-mask-like output of -INFINITY on every third entry.
__global__ void block_totals(const float *x, float *totals, int n) {
  extern __shared__ float partial[];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? x[i] * x[i] : 0.0f;
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (unsigned k = 0; k < blockDim.x; ++k)
      s += partial[k];
    totals[blockIdx.x] = s;
  }
}

__global__ void masked(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = (i % 3 == 0) ? -INFINITY : x[i] * x[i];
}
"""


@needs_cuda_headers
def test_check_gradient_through_dynamic_shared_memory():
    """The generated adjoint of a kernel using extern __shared__ keeps the
    shadow after the primal in the launch's region; check_gradient takes
    shared_memory= like run."""
    kernel = nabla.cuda.Kernel(DYNAMIC_SHARED, "block_totals")
    x = np.random.default_rng(5).uniform(-1, 1, 50).astype(np.float32)
    report = nabla.check_gradient(kernel, grid=2, block=32,
                                  args=[x, np.zeros(2, np.float32), 50],
                                  dup=[0, 1], shared_memory=128)
    assert report["ok"], report


@needs_cuda_headers
def test_check_gradient_ignores_outputs_that_stay_infinite():
    """-INFINITY in both finite-difference launches (a mask) did not move:
    no nan, no warning."""
    kernel = nabla.cuda.Kernel(DYNAMIC_SHARED, "masked")
    x = np.random.default_rng(6).uniform(-1, 1, 30).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = nabla.check_gradient(kernel, grid=1, block=32,
                                      args=[x, np.zeros(30, np.float32), 30],
                                      dup=[0, 1])
    assert report["ok"], report


@needs_cuda_headers
def test_growing_tape_for_a_while_loop():
    """A linked list walked and updated in place (a while loop whose trip
    count is known only by walking it): the launch gives its tape a first
    capacity and runs again with what the longest list needed; the caller
    passes nothing."""
    source = r"""
#include <enzyme.h>
__device__ void walk(float *x, const int *head, const int *next, int lists) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= lists) return;
  float carry = 1.0f;
  for (int i = head[t]; i >= 0; i = next[i]) {
    float v = x[i];
    x[i] = v * carry;
    carry = v;
  }
}
__global__ void grad_walk(float *x, float *dx, const int *head,
                          const int *next, int lists) {
  __enzyme_autodiff((void *)walk, enzyme_dup, x, dx, enzyme_const, head,
                    enzyme_const, next, enzyme_const, lists);
}
"""
    grad = nabla.cuda.Kernel(source, "grad_walk")
    # One list of 50 nodes in order, one empty.
    n = 50
    head = np.array([0, -1], np.int32)
    nxt = np.append(np.arange(1, n), -1).astype(np.int32)
    rng = np.random.default_rng(11)
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)
    dy = rng.standard_normal(n).astype(np.float32)
    out = grad(x.copy(), dy.copy(), head, nxt, 2, grid=1, block=2)
    # y[0] = x[0], y[i] = x[i] x[i-1]: dx[i] = dy[i] x[i-1] + dy[i+1] x[i+1].
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    dx = dy64.copy()
    dx[1:] = dy64[1:] * x64[:-1]
    dx[:-1] += dy64[1:] * x64[1:]
    np.testing.assert_allclose(out[0][1:], x64[1:] * x64[:-1], rtol=1e-6)
    np.testing.assert_allclose(out[1], dx, rtol=2e-3, atol=1e-4)


def test_global_tape_allocated_by_the_launch():
    """A softmax row normalised in place over a run-time length: its gradient
    kernel keeps the row's values in a global-memory tape that the launch
    sizes from `cols` and allocates; the caller passes the kernel's own
    arguments only."""
    source = r"""
#include <enzyme.h>
__device__ void normalize(float *x, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += x[r * cols + j] * x[r * cols + j];
  for (int j = 0; j < cols; ++j) x[r * cols + j] /= s;
}
__global__ void grad_normalize(float *x, float *dx, int rows, int cols) {
  __enzyme_autodiff((void *)normalize, enzyme_dup, x, dx, enzyme_const, rows,
                    enzyme_const, cols);
}
"""
    grad = nabla.cuda.Kernel(source, "grad_normalize")
    rows, cols = 3, 9
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, (rows, cols)).astype(np.float32)
    dy = rng.standard_normal((rows, cols)).astype(np.float32)
    out = grad(x.ravel().copy(), dy.ravel().copy(), rows, cols, grid=1,
               block=4)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    s = (x64 ** 2).sum(axis=1, keepdims=True)
    dx = dy64 / s - 2 * x64 * (dy64 * x64).sum(axis=1, keepdims=True) / s ** 2
    np.testing.assert_allclose(out[1].reshape(rows, cols), dx, rtol=2e-3,
                               atol=1e-4)
    (compiled,) = grad._compiled.values()
    entry = next(k for k in compiled.manifest["kernels"]
                 if k["name"] == grad.name)
    assert "arg3" in entry["tape"]["formula"]


@needs_cuda_headers
def test_global_tape_over_the_cap_raises():
    """max_tape_bytes caps the tape a launch allocates; over it, the launch
    raises before it starts, naming the bytes it needed."""
    source = r"""
#include <enzyme.h>
__device__ void scale(float *x, int n) {
  int t = threadIdx.x;
  float s = 0.0f;
  for (int j = 0; j < n; ++j) s += x[t * n + j];
  for (int j = 0; j < n; ++j) x[t * n + j] *= s;
}
__global__ void grad_scale(float *x, float *dx, int n) {
  __enzyme_autodiff((void *)scale, enzyme_dup, x, dx, enzyme_const, n);
}
"""
    grad = nabla.cuda.Kernel(source, "grad_scale")
    x = np.ones(4 * 100, np.float32)
    grad(x, x.copy(), 100, grid=1, block=4, max_tape_bytes=1 << 20)
    with pytest.raises(RuntimeError, match=r"needs a global-memory tape of \d+ "
                       r"bytes .* over the limit of 64 bytes"):
        grad(x, x.copy(), 100, grid=1, block=4, max_tape_bytes=64)
    with pytest.raises(ValueError, match="max_tape_bytes must be a positive"):
        grad(x, x.copy(), 100, grid=1, block=4, max_tape_bytes=0)


@needs_cuda_headers
def test_module_scope_device_memory():
    """`__constant__` and `__device__` variables from CUDA source: a table
    read and differentiated through, and a counter the kernel advances (on
    Vulkan a buffer the runtime owns while the module is loaded, filled
    from the initializer at each call)."""
    source = r"""
#include <enzyme.h>
__constant__ float c_weight[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ unsigned int g_calls = 0;
__device__ void weigh(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = c_weight[i & 3] * x[i] * x[i];
}
__global__ void weigh_kernel(const float *x, float *y, unsigned *calls, int n) {
  weigh(x, y, n);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) calls[i] = atomicAdd(&g_calls, 1u);
}
__global__ void weigh_reverse(const float *x, float *dx, float *y, float *dy,
                              int n) {
  __enzyme_autodiff((void *)weigh, enzyme_dup, x, dx, enzyme_dup, y, dy,
                    enzyme_const, n);
}
"""
    module = nabla.cuda.module(source)
    n = 70
    x = np.linspace(-1, 1, n).astype(np.float32)
    weight = np.array([1.0, 2.0, 3.0, 4.0])[np.arange(n) & 3]
    for _ in range(2):
        _, y, calls, _ = module.kernel("weigh_kernel")(
            x, np.zeros_like(x), np.zeros(n, np.uint32), n, grid=2, block=64)
        np.testing.assert_allclose(y, weight * x * x, rtol=1e-6)
        np.testing.assert_array_equal(np.sort(calls), np.arange(n))
    _, dx, _, _, _ = module.kernel("weigh_reverse")(
        x, np.zeros_like(x), np.zeros_like(x), np.ones_like(x), n, grid=2,
        block=64)
    np.testing.assert_allclose(dx, 2 * weight * x, rtol=1e-6)


@needs_cuda_headers
def test_ragged_rows_tape_sized_from_a_buffer():
    """A loop bounded by offsets in memory that overwrites what it reads:
    the gradient's global tape is sized by the launcher from the offsets
    array passed in (NumPy here), nothing passed for it."""
    source = r"""
#include <enzyme.h>
__device__ void scale_rows(float *x, const int *offsets, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows)
    for (int j = offsets[row]; j < offsets[row + 1]; j++)
      x[j] = sinf(x[j]) * x[j];
}
__global__ void scale_rows_reverse(float *x, float *dx, const int *offsets,
                                   int rows) {
  __enzyme_autodiff((void *)scale_rows, enzyme_dup, x, dx, enzyme_const,
                    offsets, enzyme_const, rows);
}
"""
    offsets = np.array([0, 5, 5, 40, 41], np.int32)
    x = np.linspace(-2, 2, 41).astype(np.float32)
    w = np.linspace(1, 2, 41).astype(np.float32)
    kernel = nabla.cuda.Kernel(source, "scale_rows_reverse")
    xr, dx, _, _ = kernel(x.copy(), w.copy(), offsets, 4, grid=1, block=8)
    np.testing.assert_allclose(xr, np.sin(x) * x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx, w * (np.cos(x) * x + np.sin(x)),
                               rtol=1e-5, atol=1e-5)
