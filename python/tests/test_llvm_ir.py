# ===- test_llvm_ir.py - nabla.Module.parse_llvm_ir ----------------------=== #
#
# A frontend's LLVM IR through the Python API: the Julia-style seed (text and
# bitcode) and a clang CUDA kernel, raised, differentiated through Enzyme's
# markers and run on the default device; bad IR raises MLIRError with the
# located diagnostic.
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os
import shutil
import subprocess

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRONTENDS = os.path.join(ROOT, "test", "Integration", "frontends")
JULIA_V2 = open(os.path.join(FRONTENDS, "julia", "seed_v2.ll")).read()
LLVM_AS = "/usr/lib/llvm-22/bin/llvm-as"
CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"


def check_julia_seed(module, tmp_path):
    W = np.array([1.5, -2.0, 0.25, 4.0], np.float32)
    n = 70
    A = np.linspace(-1, 1, n).astype(np.float32)
    dA = np.ones(n, np.float32)
    w4 = W[np.arange(n) % 4]
    out = nabla.run(module, "julia_grad_mul_kernel_1207", grid=2, block=64,
                    args=[A, n, n, n, dA, n, n, n], relocs={"Main.weights": W})
    np.testing.assert_allclose(out[4], 2 * A * w4, rtol=1e-5)
    np.testing.assert_allclose(out[0], A * A * w4, rtol=1e-5)


def test_julia_style_text(tmp_path):
    module = nabla.Module.parse_llvm_ir(JULIA_V2)
    text = str(module)
    assert "gpu.func @julia_grad_mul_kernel_1207" in text
    assert "nabla.autodiff @julia_mul_1205" in text
    assert 'key = "Main.weights"' in text
    check_julia_seed(module, tmp_path)


def test_julia_style_bitcode(tmp_path):
    bitcode = subprocess.run([LLVM_AS, "-o", "-"], input=JULIA_V2.encode(),
                             capture_output=True, check=True).stdout
    module = nabla.Module.parse_llvm_ir(bitcode, module_name="julia")
    assert "gpu.module @julia" in str(module)
    check_julia_seed(module, tmp_path)


@pytest.mark.skipif(not os.path.isdir("/usr/local/cuda/include"),
                    reason="clang's CUDA mode needs the CUDA headers")
def test_clang_cuda_seed(tmp_path):
    ll = tmp_path / "seed.ll"
    subprocess.run([CLANG, "-x", "cuda", "--cuda-device-only",
                    "--cuda-gpu-arch=sm_80", "--cuda-path=/usr/local/cuda",
                    "-nocudalib", "-O2", "-S", "-emit-llvm",
                    "-Wno-unknown-cuda-version",
                    os.path.join(FRONTENDS, "seed.cu"), "-o", str(ll)],
                   check=True, capture_output=True)
    module = nabla.Module.parse_llvm_ir(ll.read_text())
    A = np.linspace(-2, 2, 50).astype(np.float32)
    dA = np.full(50, 0.5, np.float32)
    out = nabla.run(module, "_Z15grad_mul_kernelPfS_i", grid=1, block=64,
                    args=[A, dA, 50])  # a plain int for the kernel's i32
    np.testing.assert_allclose(out[1], A, rtol=1e-6)  # 2 * A * 0.5


def test_bad_llvm_ir_raises_located_error():
    with pytest.raises(nabla.MLIRError) as error:
        nabla.Module.parse_llvm_ir("define void @k( {")
    assert "invalid LLVM IR" in str(error.value)
    with pytest.raises(nabla.MLIRError) as error:
        nabla.Module.parse_llvm_ir(
            "define ptx_kernel void @k(ptr %a) {\n"
            "  call void asm sideeffect \"trap;\", \"\"()\n"
            "  ret void\n}\n")
    assert "cannot raise inline assembly" in str(error.value)
    with pytest.raises(TypeError):
        nabla.Module.parse_llvm_ir(42)
