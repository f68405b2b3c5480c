# ===- test_frontend_source.py - nabla-run on CUDA and HIP source --------=== #
#
# `nabla-run kernel.cu`: clang-22 compiles the source with Nabla's enzyme.h
# on the include path, the kernel is named as the source names it, and the
# primal and its gradient are checked against numpy on the default device;
# --clang-option reaches clang; clang's errors come through with the .cu
# line, the raise's at the .cu line too; a missing clang and a kernel the
# file lacks are clear errors (exit 1).
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import numpy as np
import pytest

from frontend_helpers import BIN, SOURCES, needs_cuda_headers

NABLA_RUN = os.path.join(BIN, "nabla-run")

# The seed with the shipped header (<enzyme.h>, not the test folder's).
SEED = r"""
#include <enzyme.h>

__device__ void mul(float *A, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    A[i] = A[i] * A[i] * SCALE;
}

__global__ void mul_kernel(float *A, int n) { mul(A, n); }

__global__ void grad_mul_kernel(float *A, float *dA, int n) {
  __enzyme_autodiff<void>((void *)mul, enzyme_dup, A, dA, enzyme_const, n);
}
"""


def nabla_run(tmp_path, source, kernel, args, extra=(), name="seed.cu",
              env=None):
    """nabla-run on `source` written to tmp_path/name; (result, outputs)."""
    path = tmp_path / name
    path.write_text(source)
    out = tmp_path / "out"
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(tmp_path / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp_path / f'in{k}.npy'}")
        else:
            specs.append(f"--arg={arg}")
    result = subprocess.run(
        [NABLA_RUN, str(path), f"--kernel={kernel}", "--grid=1", "--block=64",
         f"--out={out}"] + specs + list(extra), capture_output=True,
        text=True, timeout=300, env=env)
    outputs = {k: np.load(out / f"arg{k}.npy") for k, arg in enumerate(args)
               if isinstance(arg, np.ndarray) and result.returncode == 0}
    return result, outputs


@needs_cuda_headers
def test_cuda_source_runs_and_differentiates(tmp_path):
    A = np.linspace(-1, 1, 50).astype(np.float32)
    flags = ["--clang-option=-DSCALE=3.0f"]
    result, out = nabla_run(tmp_path, SEED, "mul_kernel", [A, "i32:50"], flags)
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(out[0], 3 * A * A, rtol=1e-6)
    # The gradient kernel by its C++ name, or by its IR (mangled) name.
    for kernel in ("grad_mul_kernel", "_Z15grad_mul_kernelPfS_i"):
        result, out = nabla_run(tmp_path, SEED, kernel,
                                [A, np.ones_like(A), "i32:50"], flags)
        assert result.returncode == 0, result.stderr
        np.testing.assert_allclose(out[1], 6 * A, rtol=1e-6)


def test_hip_source_runs(tmp_path):
    with open(os.path.join(SOURCES, "hip_seed.hip")) as file:
        source = file.read()
    A = np.linspace(-1, 1, 40).astype(np.float32)
    result, out = nabla_run(tmp_path, source, "grad_mulsin",
                            [A, np.ones_like(A), "i32:40"],
                            [f"--clang-option=-I{SOURCES}"], name="seed.hip")
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(out[1], np.sin(A) + A * np.cos(A), rtol=1e-5,
                               atol=1e-6)


@needs_cuda_headers
def test_clang_errors_pass_through(tmp_path):
    A = np.zeros(4, np.float32)
    # SCALE undefined: clang's own message, at the .cu line.
    result, _ = nabla_run(tmp_path, SEED, "mul_kernel", [A, "i32:4"])
    assert result.returncode == 1
    assert f"{tmp_path / 'seed.cu'}:7:26: error: use of undeclared identifier " \
        "'SCALE'" in result.stderr
    # Raised, but not raisable: the raise's error at the .cu line.
    source = "__global__ void timed(long long *t) {\n  t[0] = clock64();\n}\n"
    result, _ = nabla_run(tmp_path, source, "timed",
                          [np.zeros(1, np.int64)], name="timed.cu")
    assert result.returncode == 1
    assert "error: cannot raise 'nvvm.read.ptx.sreg.clock64'" in result.stderr
    assert f"{tmp_path / 'timed.cu'}:2:10: note: called from" in result.stderr


@needs_cuda_headers
def test_clear_errors(tmp_path):
    A = np.zeros(4, np.float32)
    flags = ["--clang-option=-DSCALE=1.0f"]
    result, _ = nabla_run(tmp_path, SEED, "nope", [A, "i32:4"], flags)
    assert result.returncode == 1
    assert ("error: no kernel named 'nope' (kernels: _Z10mul_kernelPfi "
            "(mul_kernel(float*, int)), _Z15grad_mul_kernelPfS_i "
            "(grad_mul_kernel(float*, float*, int)))") in result.stderr
    env = dict(os.environ, NABLA_CLANG=str(tmp_path / "no-clang"))
    result, _ = nabla_run(tmp_path, SEED, "mul_kernel", [A, "i32:4"], flags,
                          env=env)
    assert result.returncode == 1
    assert "error: NABLA_CLANG is set to" in result.stderr
    result = subprocess.run([NABLA_RUN, str(tmp_path / "absent.cu"),
                             "--kernel=k", "--grid=1", "--block=1"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "error: cannot open" in result.stderr


def test_clang_option_is_for_sources_only(tmp_path):
    mlir = tmp_path / "k.mlir"
    mlir.write_text("gpu.module @k { gpu.func @k() kernel { gpu.return } }\n")
    result = subprocess.run([NABLA_RUN, str(mlir), "--kernel=k", "--grid=1",
                             "--block=1", "--clang-option=-O1"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "--clang-option applies to CUDA and HIP sources" in result.stderr
