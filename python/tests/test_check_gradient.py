# ===- test_check_gradient.py - nabla.check_gradient's defaults and report -=== #
#
# Float32 kernels pass with the defaults whatever their inputs' magnitude
# (1e-3 to 1e3), float64 checks stay tight (a gradient off by 1e-4 fails), a
# wrong gradient fails naming the buffer and the elements, and kernels that
# read relocated objects are checked through relocs=.
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = open(os.path.join(ROOT, "examples", "mul_kernel.mlir")).read()
RELOCATED = open(os.path.join(ROOT, "test", "Integration", "gradients",
                              "relocated.mlir")).read()

# y = x^2 w + x / (1 + w^2) elementwise, and per row of X: y[r] = sum_c
# X[r, c]^2 w[c] (one thread per row, a loop over the columns).
KERNELS = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @blend(%x: memref<?xf32>, %w: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %b = memref.load %w[%i] : memref<?xf32>
        %ab = arith.mulf %a, %b : f32
        %aab = arith.mulf %ab, %a : f32
        %one = arith.constant 1.0 : f32
        %bb = arith.mulf %b, %b : f32
        %d = arith.addf %one, %bb : f32
        %q = arith.divf %a, %d : f32
        %r = arith.addf %aab, %q : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @rows(%X: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?xf32>) kernel {
      %r = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %nrows = memref.dim %X, %c0 : memref<?x?xf32>
      %ncols = memref.dim %X, %c1 : memref<?x?xf32>
      %in = arith.cmpi ult, %r, %nrows : index
      scf.if %in {
        %zero = arith.constant 0.0 : f32
        %s = scf.for %c = %c0 to %ncols step %c1 iter_args(%acc = %zero) -> (f32) {
          %x = memref.load %X[%r, %c] : memref<?x?xf32>
          %wc = memref.load %w[%c] : memref<?xf32>
          %x2 = arith.mulf %x, %x : f32
          %t = arith.mulf %x2, %wc : f32
          %a = arith.addf %acc, %t : f32
          scf.yield %a : f32
        }
        memref.store %s, %y[%r] : memref<?xf32>
      }
      gpu.return
    }
  }
}"""


def _square_grad(name, factor, element="f32", only_at=None):
    """A hand-written reverse mode of mul_kernel: dA <- factor * A * dA
    (everywhere, or only at element `only_at`, 2 A dA elsewhere)."""
    t = element
    pick = "%c = arith.constant " + factor + " : " + t
    if only_at is not None:
        pick = f"""%wrong = arith.constant {factor} : {t}
        %right = arith.constant 2.0 : {t}
        %at = arith.constant {only_at} : index
        %here = arith.cmpi eq, %i, %at : index
        %c = arith.select %here, %wrong, %right : {t}"""
    return f"""
    gpu.func @{name}(%A: memref<?x{t}>, %dA: memref<?x{t}>, %n: index) kernel {{
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {{
        %a = memref.load %A[%i] : memref<?x{t}>
        %d = memref.load %dA[%i] : memref<?x{t}>
        {pick}
        %s = arith.mulf %c, %a : {t}
        %g = arith.mulf %s, %d : {t}
        memref.store %g, %dA[%i] : memref<?x{t}>
      }}
      gpu.return
    }}
"""


def _with(source, *kernels):
    marker = "    gpu.func @grad_mul_kernel("
    return source.replace(marker, "".join(kernels) + marker)


F64_SEED = SEED.replace("f32", "f64")


@pytest.mark.parametrize("magnitude", [1e-3, 1e-1, 1e1, 1e3])
def test_float32_defaults_pass_across_magnitudes(magnitude):
    # Correct float32 gradients pass with the defaults (steps and tolerances
    # from the type and the values), whatever the inputs' scale.
    rng = np.random.default_rng(7)
    seed = nabla.Module.parse(SEED)
    a = (rng.standard_normal(500) * magnitude).astype(np.float32)
    report = nabla.check_gradient(seed, "mul_kernel", "grad_mul_kernel", 8, 64,
                                  [a, 500], dup=[0])
    assert report["ok"], report
    assert report["eps"] == 1e-2 and report["rtol"] == 1e-3
    kernels = nabla.Module.parse(KERNELS)
    x = (rng.standard_normal(300) * magnitude).astype(np.float32)
    w = (rng.standard_normal(300) * magnitude).astype(np.float32)
    report = nabla.check_gradient(kernels, "blend", None, 5, 64,
                                  [x, w, np.zeros_like(x), 300], dup=[0, 1, 2])
    assert report["ok"], report
    X = (rng.standard_normal((40, 24)) * magnitude).astype(np.float32)
    w = (rng.standard_normal(24) * magnitude).astype(np.float32)
    report = nabla.check_gradient(kernels, "rows", None, 1, 64,
                                  [X, w, np.zeros(40, np.float32)],
                                  dup=[0, 1, 2])
    assert report["ok"], report


def test_seed_kernel_passes_with_defaults():
    # What failed before the defaults knew float32 (reverse 89.9994 vs
    # finite differences 89.9065 with an absolute step of 1e-6).
    m = nabla.Module.parse(SEED)
    a = np.linspace(-3, 3, 1000).astype(np.float32)
    report = nabla.check_gradient(m, "mul_kernel", "grad_mul_kernel", 16, 64,
                                  [a, 1000], dup=[0])
    assert report["ok"], report
    # The Kernel object stands for module and kernel.
    assert nabla.check_gradient(m.kernel("mul_kernel"), grid=16, block=64,
                                args=[a, 1000], dup=[0])["ok"]


def test_float32_catches_a_gradient_one_percent_off():
    m = nabla.Module.parse(_with(SEED, _square_grad("close_grad", "2.02")))
    a = np.linspace(0.5, 1.5, 64).astype(np.float32)
    report = nabla.check_gradient(m, "mul_kernel", "close_grad", 1, 64,
                                  [a, 64], dup=[0], elements=1)
    assert not report["ok"], report


def test_float64_stays_tight():
    # float64: rtol 1e-6 by default; a gradient off by 1e-4 fails.
    m = nabla.Module.parse(_with(F64_SEED,
                                 _square_grad("close_grad", "2.0002", "f64")))
    a = np.linspace(-2, 2, 64)
    report = nabla.check_gradient(m, "mul_kernel", "grad_mul_kernel", 1, 64,
                                  [a, 64], dup=[0])
    assert report["ok"], report
    assert report["rtol"] == 1e-6
    assert abs(report["finite_differences"] - report["reverse"]) < \
        1e-9 * abs(report["reverse"])
    report = nabla.check_gradient(m, "mul_kernel", "close_grad", 1, 64,
                                  [a, 64], dup=[0], elements=1)
    assert not report["ok"], report
    assert len(report["buffers"][0]["elements"]) == 1


def test_wrong_element_is_named():
    # The gradient is wrong at element 37 only: the report names the buffer
    # and exactly that element, with both values.
    wrong = _square_grad("wrong_at_37", "3.0", only_at=37)
    m = nabla.Module.parse(_with(SEED, wrong))
    a = np.linspace(0.5, 1.5, 100).astype(np.float32)
    report = nabla.check_gradient(m, "mul_kernel", "wrong_at_37", 2, 64,
                                  [a, 100], dup=[0])
    assert not report["ok"]
    buffer, = report["buffers"]
    assert buffer["parameter"] == 0 and buffer["name"] == "A" and not buffer["ok"]
    assert [e["index"] for e in buffer["elements"]] == [(37,)]
    element, = buffer["elements"]
    # reverse = 3 a w, finite differences = 2 a w at that element.
    assert element["reverse"] == pytest.approx(1.5 * element["finite_differences"],
                                               rel=1e-3)
    text = str(report)
    assert "FAILED" in text and "parameter #0 'A' (memref<?xf32>" in text
    assert "[37]" in text


def test_wrong_elements_of_a_matrix_are_indexed_by_row_and_column():
    # A gradient wrong everywhere (3 A instead of 2 A on a 4x8 matrix): the
    # report lists the largest differences first, as (row, column).
    source = KERNELS.replace("    gpu.func @blend(", """
    gpu.func @square2d(%A: memref<4x8xf32>) kernel {
      %t = gpu.global_id x
      %c8 = arith.constant 8 : index
      %r = arith.divui %t, %c8 : index
      %c = arith.remui %t, %c8 : index
      %a = memref.load %A[%r, %c] : memref<4x8xf32>
      %s = arith.mulf %a, %a : f32
      memref.store %s, %A[%r, %c] : memref<4x8xf32>
      gpu.return
    }
    gpu.func @square2d_wrong(%A: memref<4x8xf32>, %dA: memref<4x8xf32>) kernel {
      %t = gpu.global_id x
      %c8 = arith.constant 8 : index
      %r = arith.divui %t, %c8 : index
      %c = arith.remui %t, %c8 : index
      %a = memref.load %A[%r, %c] : memref<4x8xf32>
      %d = memref.load %dA[%r, %c] : memref<4x8xf32>
      %three = arith.constant 3.0 : f32
      %s = arith.mulf %three, %a : f32
      %g = arith.mulf %s, %d : f32
      memref.store %g, %dA[%r, %c] : memref<4x8xf32>
      gpu.return
    }
    gpu.func @blend(""")
    m = nabla.Module.parse(source)
    A = np.linspace(0.5, 2, 32, dtype=np.float32).reshape(4, 8)
    assert nabla.check_gradient(m, "square2d", None, 1, 32, [A], dup=[0])["ok"]
    report = nabla.check_gradient(m, "square2d", "square2d_wrong", 1, 32, [A],
                                  dup=[0], elements=5)
    buffer, = report["buffers"]
    assert len(buffer["elements"]) == 5 and buffer["elements_truncated"]
    differences = [abs(e["difference"]) for e in buffer["elements"]]
    assert differences == sorted(differences, reverse=True)
    for e in buffer["elements"]:
        row, column = e["index"]
        assert 0 <= row < 4 and 0 <= column < 8
        assert e["reverse"] == pytest.approx(1.5 * e["finite_differences"],
                                             rel=1e-3)
    assert "pass elements= for more" in str(report)


def test_relocs():
    # A kernel reading a relocated host table: relocs= gives it to every
    # launch; without it the error says to pass relocs.
    m = nabla.Module.parse(RELOCATED)
    table = np.array([1.0, -2.0, 0.5, 3.0])
    a = np.linspace(-1, 1, 50)
    report = nabla.check_gradient(m, "f_kernel", "f_grad", 1, 64, [a, 50],
                                  dup=[0], tangent_kernel="f_tangent",
                                  relocs={"host.table": table})
    assert report["ok"], report
    assert report["dot_product_ok"]
    generated = nabla.check_gradient(m, "f_kernel", None, 1, 64, [a, 50],
                                     dup=[0], relocs={"host.table": table})
    assert generated["ok"] and generated["reverse"] == pytest.approx(
        report["reverse"], rel=1e-12)
    with pytest.raises(ValueError, match="reads the relocated object "
                                         "'host.table': pass it in relocs"):
        nabla.check_gradient(m, "f_kernel", "f_grad", 1, 64, [a, 50], dup=[0])


def test_writable_relocated_object_is_held_fixed():
    # Every launch gets a fresh copy of the relocated objects: the caller's
    # writable one is not changed, and no launch sees another's writes.
    source = KERNELS.replace("    gpu.func @blend(", """
    reloc.global @count : memref<1xf32> {key = "Main.count"}
    gpu.func @logged(%A: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %log = reloc.get_global @count : memref<1xf32>
        %k = memref.load %log[%c0] : memref<1xf32>
        %a = memref.load %A[%i] : memref<?xf32>
        %s = arith.mulf %a, %a : f32
        %t = arith.addf %s, %k : f32
        memref.store %t, %A[%i] : memref<?xf32>
        %one = arith.constant 1.0 : f32
        %k1 = arith.addf %k, %one : f32
        memref.store %k1, %log[%c0] : memref<1xf32>
      }
      gpu.return
    }
    gpu.func @blend(""")
    m = nabla.Module.parse(source)
    count = np.zeros(1, np.float32)
    a = np.linspace(0.5, 1.5, 16).astype(np.float32)
    report = nabla.check_gradient(m, "logged", None, 1, 16, [a, 16], dup=[0],
                                  relocs={"Main.count": count})
    assert report["ok"], report
    assert count[0] == 0


def test_argument_errors():
    m = nabla.Module.parse(SEED)
    a = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="only buffers of f16, bf16, f32 or f64"):
        nabla.check_gradient(m, "mul_kernel", None, 1, 64, [a, 4], dup=[1])
    with pytest.raises(ValueError, match="dup names parameter 5"):
        nabla.check_gradient(m, "mul_kernel", None, 1, 64, [a, 4], dup=[5])
    with pytest.raises(ValueError, match="takes 2 arguments"):
        nabla.check_gradient(m, "mul_kernel", None, 1, 64, [a], dup=[0])
    with pytest.raises(TypeError, match="needs grid, block"):
        nabla.check_gradient(m, "mul_kernel", args=[a, 4], dup=[0])


# y = x^3 in f32 between bf16 loads and stores.
BF16 = open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "bf16_cube.mlir")).read()


def bf16_bits(x):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def test_bf16_buffers():
    """bf16 buffers (numpy has no bfloat16) as uint16 bits: the kernel runs
    on the default device (SPIR-V keeps bf16 as i16 bits) and its generated
    adjoint passes the check with bf16 steps and tolerances."""
    m = nabla.Module.parse(BF16)
    x = bf16_bits(np.linspace(-1.5, 1.5, 40))
    y = nabla.run(m, "cube", 1, 64, [x, np.zeros(40, np.uint16), 40])[1]
    assert y.dtype == np.uint16
    xf = (x.astype(np.uint32) << 16).view(np.float32)
    yf = (y.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_allclose(yf, xf.astype(np.float64) ** 3, rtol=2 ** -8,
                               atol=1e-30)
    report = nabla.check_gradient(m, "cube", None, 1, 64,
                                  [x, np.zeros(40, np.uint16), 40], dup=[0, 1])
    assert report["ok"], str(report)
