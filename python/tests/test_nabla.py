# ===- test_nabla.py - Tests of the nabla Python package -----------------=== #
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = open(os.path.join(ROOT, "examples", "mul_kernel.mlir")).read()


def test_parse_print_round_trip():
    m = nabla.Module.parse(SEED)
    text = str(m)
    assert "nabla.autodiff @mul" in text
    assert str(nabla.Module.parse(text)) == text


def test_parse_error_carries_located_diagnostics():
    with pytest.raises(nabla.MLIRError) as error:
        nabla.Module.parse("func.func @f() {\n  %x = arith.addf\n}")
    severity, location, message = error.value.diagnostics[0]
    assert severity == "error" and ":2:" in location
    assert "expected SSA operand" in message


def test_verifier_error_is_mlir_error():
    with pytest.raises(nabla.MLIRError) as error:
        nabla.Module.parse("""
          func.func @g(%x: f32) {
            nabla.autodiff @missing(%x) {activity = [#nabla.activity<const>], ret_activity = []} : (f32) -> ()
            return
          }""")
    assert any("does not reference a symbol" in d[2] for d in error.value.diagnostics)


def test_type_errors():
    with pytest.raises(TypeError):
        nabla.Module.parse(b"bytes")
    with pytest.raises(TypeError):
        nabla.PassManager(42)


def test_custom_pipeline_string():
    m = nabla.Module.parse(SEED)
    nabla.PassManager("builtin.module(nabla-differentiate, canonicalize, cse)").run(m)
    assert "__nabla_vjp_mul_dc" in str(m)
    assert "nabla.autodiff" not in str(m)


def test_invalid_pipeline_is_mlir_error():
    with pytest.raises(nabla.MLIRError, match="invalid pass pipeline"):
        nabla.PassManager("builtin.module(no-such-pass)").run(nabla.Module.parse(SEED))


def test_bad_pipeline_options_are_mlir_errors():
    # Checked while the pipeline is built, before the module is touched.
    m = nabla.Module.parse(SEED)
    with pytest.raises(nabla.MLIRError,
                       match="nabla-to-spirv: unknown abi 'v9' \\(expected v1 or v2\\)"):
        nabla.PassManager("builtin.module(nabla-to-spirv{abi=v9})").run(m)
    with pytest.raises(nabla.MLIRError, match="did you mean 'workgroup-size'"):
        nabla.PassManager("builtin.module(nabla-to-spirv{workgroup_size=4})").run(m)
    assert "nabla.autodiff" in str(m)


def test_failing_pipeline_is_mlir_error():
    m = nabla.Module.parse(SEED)
    with pytest.raises(nabla.MLIRError) as error:
        nabla.PassManager(
            "builtin.module(nabla-check-target-support{target=spirv abi=v9})").run(m)
    assert any("unknown abi 'v9'" in d[2] for d in error.value.diagnostics)


def test_passes_lists_nabla_and_upstream():
    listed = {p["name"]: p for p in nabla.passes()}
    assert "nabla-differentiate" in listed and "canonicalize" in listed
    assert "nabla-to-nvvm" in listed
    assert "chip" in listed["nabla-to-nvvm"]["options"]


@pytest.mark.parametrize("target,files", [
    ("nvvm", {"kernels.ptx", "kernels.cubin"}),
    ("rocdl", {"kernels.hsaco"}),
    ("spirv", {"kernels.spv"}),
    ("metal", {"kernels.metal"}),
])
def test_compile_every_target(target, files):
    m = nabla.Module.parse(SEED)
    result = nabla.compile(m, target, workgroup_size=64)
    assert set(result.artifacts) == files
    assert result.manifest["target"] == target
    assert {k["name"] for k in result.manifest["kernels"]} == {"mul_kernel", "grad_mul_kernel"}
    # compile works on a copy: the module is unchanged.
    assert "nabla.autodiff" in str(m)


def test_compile_error():
    with pytest.raises(ValueError):
        nabla.compile(nabla.Module.parse(SEED), "opencl")
    with pytest.raises(nabla.MLIRError):
        nabla.compile(nabla.Module.parse(SEED), "nvvm", chip="gfx90a")


def test_run_primal_and_gradient():
    m = nabla.Module.parse(SEED)
    a = np.linspace(-2, 2, 40, dtype=np.float32)
    w = np.ones(40, dtype=np.float32)
    out = nabla.run(m, "mul_kernel", 1, 64, [a, ("index", 40)])
    np.testing.assert_array_equal(out[0], a * a)
    assert out[1] is None
    grad = nabla.run(m, "grad_mul_kernel", 1, 64, [a, w, ("index", 40)])
    np.testing.assert_allclose(grad[1], 2 * a * w, rtol=1e-6)


def test_run_argument_errors():
    m = nabla.Module.parse(SEED)
    a = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="takes 2 arguments"):
        nabla.run(m, "mul_kernel", 1, 64, [a])
    with pytest.raises(TypeError, match="needs dtype float32"):
        nabla.run(m, "mul_kernel", 1, 64, [a.astype(np.float64), ("index", 4)])
    with pytest.raises(ValueError, match="does not accept shape"):
        nabla.run(m, "mul_kernel", 1, 64, [np.zeros((), np.float32), ("index", 4)])
    with pytest.raises(TypeError, match="is index"):
        nabla.run(m, "mul_kernel", 1, 64, [a, ("f32", 4.0)])
    with pytest.raises(TypeError, match="needs a numpy array"):
        nabla.run(m, "mul_kernel", 1, 64, [[1.0, 2.0], ("index", 2)])
    with pytest.raises(ValueError, match="unknown kernel"):
        nabla.run(m, "nope", 1, 64, [a, ("index", 4)])
    with pytest.raises(ValueError, match="grid"):
        nabla.run(m, "mul_kernel", 0, 64, [a, ("index", 4)])
    with pytest.raises(ValueError, match="block must be 1 to 3 integers, each 1 to 1024"):
        nabla.run(m, "mul_kernel", 1, 100000, [a, ("index", 4)])
    with pytest.raises(RuntimeError, match="exceeds"):
        nabla.run(m, "mul_kernel", 1, (1024, 1024), [a, ("index", 4)])


def test_check_gradient():
    m = nabla.Module.parse(SEED)
    a = np.linspace(-1, 1, 32).astype(np.float32)
    report = nabla.check_gradient(m, "mul_kernel", "grad_mul_kernel", 1, 64,
                                  [a, ("index", 32)], dup=[0], eps=1e-3,
                                  rtol=1e-3)
    assert report["ok"], report


TANGENT = SEED.replace("""    gpu.func @grad_mul_kernel(""", """    gpu.func @tangent_mul_kernel(%A: memref<?xf32>, %tA: memref<?xf32>, %n: index) kernel {
      nabla.fwddiff @mul(%A, %tA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                       ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    gpu.func @grad_mul_kernel(""")


def test_check_gradient_with_dot_product_test():
    m = nabla.Module.parse(TANGENT)
    a = np.linspace(-1, 1, 32).astype(np.float32)
    report = nabla.check_gradient(m, "mul_kernel", "grad_mul_kernel", 1, 64,
                                  [a, ("index", 32)], dup=[0],
                                  tangent_kernel="tangent_mul_kernel",
                                  eps=1e-3, rtol=1e-3)
    assert report["ok"], report
    assert np.isclose(report["forward"], report["reverse"], rtol=1e-5)


WRONG = SEED.replace("""    gpu.func @grad_mul_kernel(""", """    // Claims dA <- 3 A dA, but the derivative of A*A is 2 A.
    gpu.func @wrong_grad_kernel(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %A[%i] : memref<?xf32>
        %d = memref.load %dA[%i] : memref<?xf32>
        %three = arith.constant 3.0 : f32
        %t = arith.mulf %three, %a : f32
        %g = arith.mulf %t, %d : f32
        memref.store %g, %dA[%i] : memref<?xf32>
      }
      gpu.return
    }

    gpu.func @grad_mul_kernel(""")


def test_check_gradient_detects_a_wrong_gradient():
    m = nabla.Module.parse(WRONG)
    a = np.linspace(0.5, 1.5, 32).astype(np.float32)
    report = nabla.check_gradient(m, "mul_kernel", "wrong_grad_kernel", 1, 64,
                                  [a, ("index", 32)], dup=[0], eps=1e-3,
                                  rtol=1e-3)
    assert not report["ok"], report


def test_materialized_relocation_runs():
    # A host table recorded with known contents, materialized and read by a
    # kernel on the device.
    m = nabla.Module.parse("""
    module attributes {gpu.container_module} {
      gpu.module @kernels {
        reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant,
                                              value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
        gpu.func @scale(%A: memref<?xf32>) kernel {
          %i = gpu.global_id x
          %c4 = arith.constant 4 : index
          %k = arith.remui %i, %c4 : index
          %t = reloc.get_global @coeffs : memref<4xf32>
          %c = memref.load %t[%k] : memref<4xf32>
          %a = memref.load %A[%i] : memref<?xf32>
          %p = arith.mulf %a, %c : f32
          memref.store %p, %A[%i] : memref<?xf32>
          gpu.return
        }
      }
    }""")
    nabla.PassManager("builtin.module(reloc-lower{strategy=materialize})").run(m)
    a = np.arange(8, dtype=np.float32)
    out = nabla.run(m, "scale", 1, 8, [a])
    np.testing.assert_array_equal(out[0], a * np.tile([1, 2, 3, 4], 2))


RELOCATED = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant}
    reloc.global @log : memref<8xf32> {key = "Main.log"}
    gpu.func @scale(%A: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %c4 = arith.constant 4 : index
      %k = arith.remui %i, %c4 : index
      %t = reloc.get_global @coeffs : memref<4xf32>
      %c = memref.load %t[%k] : memref<4xf32>
      %a = memref.load %A[%i] : memref<?xf32>
      %p = arith.mulf %a, %c : f32
      memref.store %p, %A[%i] : memref<?xf32>
      %l = reloc.get_global @log : memref<8xf32>
      memref.store %a, %l[%i] : memref<8xf32>
      gpu.return
    }
  }
}"""


def test_relocs_are_table_bindings():
    # abi v2 on Vulkan: each record is a table binding filled from `relocs`;
    # the writable one is updated in place.
    m = nabla.Module.parse(RELOCATED)
    a = np.arange(8, dtype=np.float32)
    log = np.zeros(8, np.float32)
    out = nabla.run(m, "scale", 1, 8, [a],
                    relocs={"host.coeffs": np.array([1, 2, 3, 4], np.float32),
                            "Main.log": log})
    np.testing.assert_array_equal(out[0], a * np.tile([1, 2, 3, 4], 2))
    np.testing.assert_array_equal(log, a)


def test_relocs_errors():
    m = nabla.Module.parse(RELOCATED)
    a = np.arange(8, dtype=np.float32)
    with pytest.raises(ValueError, match="reads the relocated object 'host.coeffs'"):
        nabla.run(m, "scale", 1, 8, [a], relocs={"Main.log": np.zeros(8, np.float32)})
    with pytest.raises(ValueError, match="not a relocation record"):
        nabla.run(m, "scale", 1, 8, [a], relocs={"host.other": a})
    with pytest.raises(TypeError, match="relocation record 'host.coeffs'.*needs dtype float32"):
        nabla.run(m, "scale", 1, 8, [a],
                  relocs={"host.coeffs": np.zeros(4), "Main.log": np.zeros(8, np.float32)})
    manifest = nabla.compile(m, "nvvm").manifest
    assert [r["strategy"] for r in manifest["relocations"]] == ["patch", "patch"]


def test_deterministic_kernel_adjoint_from_python():
    # The manifest gives the scratch size; two runs give the same bits.
    source = open(os.path.join(ROOT, "test", "Integration", "gradients",
                               "deterministic.mlir")).read()
    compiled = nabla.compile(nabla.Module.parse(source), "spirv",
                             workgroup_size=[256])
    entry = next(k for k in compiled.manifest["kernels"]
                 if k["name"] == "scale_ordered")
    blocks, n = 8, 8 * 256
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(np.float32)
    s = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(np.float32)
    w = np.array([2.0, 3.0], np.float32)
    scratch = np.zeros(1 + entry["scratch_words_per_block"] * blocks, np.int32)
    m = nabla.Module.parse(source)
    args = [x, np.zeros_like(x), w, np.zeros_like(w), np.zeros_like(x), s,
            ("index", n), scratch]
    first = nabla.run(m, "scale_ordered", blocks, 256, args)
    second = nabla.run(m, "scale_ordered", blocks, 256, args)
    np.testing.assert_allclose(first[3], [np.dot(s.astype(np.float64), x), s.sum()],
                               rtol=1e-4)
    assert first[3].tobytes() == second[3].tobytes()
    assert first[7][0] == 0


def test_parse_rejects_what_the_parser_crashes_on():
    # MLIR 22's parser overflows its stack on deep nesting and crashes on a
    # dense array of index; both are located errors instead.
    with pytest.raises(nabla.MLIRError, match="nest deeper than 256"):
        nabla.Module.parse("module attributes {x = " + "[" * 100000 + "]" * 100000 + "} {}")
    with pytest.raises(nabla.MLIRError, match=r"1:46: error: a dense array cannot hold 'index'"):
        nabla.Module.parse("func.func private @f() attributes {x = array<index: 1>}")


def test_dynamic_shared_memory():
    """shared_memory= sizes gpu.dynamic_shared_memory (extern __shared__):
    compiled into the SPIR-V on Vulkan, the launch parameter on CUDA/HIP;
    Kernel compiles once per size; without it the launch is refused."""
    m = nabla.Module.parse(open(os.path.join(
        ROOT, "test", "Integration", "corpus", "dynamic_shared.mlir")).read())
    x = np.arange(100, dtype=np.float32)
    out = nabla.run(m, "reverse", grid=2, block=64, args=[x, 100],
                    shared_memory=256)
    padded = np.zeros(128, np.float32)
    padded[:100] = x
    np.testing.assert_array_equal(out[0], padded.reshape(2, 64)[:, ::-1].ravel()[:100])
    reverse = nabla.Kernel(m, "reverse")
    out32 = reverse(x, 100, grid=4, block=32, shared_memory=128)
    padded = np.zeros(128, np.float32)
    padded[:100] = x
    np.testing.assert_array_equal(out32[0], padded.reshape(4, 32)[:, ::-1].ravel()[:100])
    with pytest.raises(nabla.MLIRError, match="--dynamic-shared-memory"):
        nabla.run(m, "reverse", grid=2, block=64, args=[x, 100])
    with pytest.raises(ValueError, match="shared_memory must be 0 to"):
        nabla.run(m, "reverse", grid=2, block=64, args=[x, 100],
                  shared_memory=-5)
    result = nabla.compile(m, "nvvm", kernel="reverse")
    assert result.manifest["kernels"][0]["dynamic_shared_memory"] == -1


def test_char_scalar_parameters():
    """i8 scalars (`char c`) take signed or unsigned byte values, like
    nabla-run's i8:V; out of range is a ValueError."""
    m = nabla.Module.parse(open(os.path.join(
        ROOT, "test", "Integration", "corpus", "element_types.mlir")).read())
    out = nabla.run(m, "fill_bytes", grid=1, block=64,
                    args=[np.zeros(5, np.uint8), -5, 5])
    np.testing.assert_array_equal(out[0], np.full(5, 251, np.uint8))
    out = nabla.run(m, "fill_bytes", grid=1, block=64,
                    args=[np.zeros(5, np.uint8), np.uint8(200), 5])
    np.testing.assert_array_equal(out[0], np.full(5, 200, np.uint8))
    with pytest.raises(ValueError, match="300 does not fit i8"):
        nabla.run(m, "fill_bytes", grid=1, block=64,
                  args=[np.zeros(5, np.uint8), 300, 5])
