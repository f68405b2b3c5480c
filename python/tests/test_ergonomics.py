# ===- test_ergonomics.py - Arguments typed from the kernel's signature --=== #
#
# Plain Python/NumPy scalars, buffer-protocol and __array_interface__
# buffers, device arrays (refused, with the reason), nabla.Kernel and every
# argument error message, on the default device (lavapipe without a GPU).
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import array
import os

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = open(os.path.join(ROOT, "examples", "mul_kernel.mlir")).read()

# out[i] = v for i < n, one kernel per scalar type; scale multiplies a
# static 2x4 matrix by s.
FILLS = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
""" + "".join(f"""
    gpu.func @fill_{t}(%out: memref<?x{t}>, %value: {t}, %n: index) kernel {{
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {{
        memref.store %value, %out[%i] : memref<?x{t}>
      }}
      gpu.return
    }}
""" for t in ("i32", "i64", "f32", "f64")) + """
    gpu.func @fill_index(%out: memref<?xi64>, %value: index, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = arith.index_cast %value : index to i64
        memref.store %v, %out[%i] : memref<?xi64>
      }
      gpu.return
    }

    gpu.func @index_buffer(%out: memref<?xindex>) kernel {
      %t = gpu.global_id x
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %in = arith.cmpi ult, %t, %c4 : index
      scf.if %in {
        %v = memref.load %out[%t] : memref<?xindex>
        %w = arith.muli %v, %c3 : index
        memref.store %w, %out[%t] : memref<?xindex>
      }
      gpu.return
    }

    gpu.func @scale(%M: memref<2x4xf32>, %s: f32) kernel {
      %t = gpu.global_id x
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %in = arith.cmpi ult, %t, %c8 : index
      scf.if %in {
        %r = arith.divui %t, %c4 : index
        %c = arith.remui %t, %c4 : index
        %m = memref.load %M[%r, %c] : memref<2x4xf32>
        %p = arith.mulf %m, %s : f32
        memref.store %p, %M[%r, %c] : memref<2x4xf32>
      }
      gpu.return
    }
  }
}
"""


@pytest.fixture(scope="module")
def fills():
    return nabla.Module.parse(FILLS)


@pytest.fixture(scope="module")
def seed():
    return nabla.Module.parse(SEED)


# --- scalars ---------------------------------------------------------------

@pytest.mark.parametrize("kernel,dtype,value", [
    ("fill_i32", np.int32, 7), ("fill_i32", np.int32, np.int32(-7)),
    ("fill_i32", np.int32, np.int64(123)), ("fill_i32", np.int32, np.array(5)),
    ("fill_i32", np.int32, True), ("fill_i32", np.int32, -2 ** 31),
    ("fill_i64", np.int64, 2 ** 40), ("fill_i64", np.int64, np.int64(-3)),
    ("fill_f32", np.float32, 1.5), ("fill_f32", np.float32, np.float32(0.25)),
    ("fill_f32", np.float32, 3), ("fill_f32", np.float32, np.array(2.5, np.float64)),
    ("fill_f64", np.float64, 0.1), ("fill_f64", np.float64, np.float64(-1e300)),
    ("fill_f64", np.float64, np.int32(4)),
    ("fill_index", np.int64, 9), ("fill_index", np.int64, np.uint8(200)),
    ("fill_index", np.int64, ("index", 3)),
])
def test_plain_scalars_are_typed_from_the_signature(fills, kernel, dtype, value):
    out = np.zeros(6, dtype)
    result = nabla.run(fills, kernel, grid=1, block=8, args=[out, value, 4])
    scalar = value[1] if isinstance(value, tuple) else value
    expected = np.array(scalar).astype(dtype)
    np.testing.assert_array_equal(result[0], [expected] * 4 + [0, 0])
    assert result[0].dtype == dtype and result[1] is None and result[2] is None


def test_unsigned_numpy_scalar_is_passed_bit_for_bit(fills):
    out = nabla.run(fills, "fill_i32", 1, 8, [np.zeros(1, np.int32),
                                               np.uint32(0xFFFFFFFF), 1])
    assert out[0][0] == -1


def test_seed_with_a_plain_int(seed):
    a = np.linspace(-2, 2, 40, dtype=np.float32)
    w = np.ones(40, np.float32)
    grad = nabla.run(seed, "grad_mul_kernel", grid=1, block=64, args=[a, w, 40])
    np.testing.assert_allclose(grad[1], 2 * a * w, rtol=1e-6)


# --- buffers -----------------------------------------------------------------

def test_array_array_is_a_buffer(seed):
    a = array.array("f", [1.0, 2.0, 3.0])
    out = nabla.run(seed, "mul_kernel", 1, 64, [a, 3])
    assert isinstance(out[0], np.ndarray) and out[0].dtype == np.float32
    np.testing.assert_array_equal(out[0], [1, 4, 9])
    assert list(a) == [1.0, 2.0, 3.0]  # arguments are never modified


def test_bytes_are_viewed_as_the_element_type(seed):
    data = np.array([1, 2, 3, 4], np.float32).tobytes()
    for buffer in (bytearray(data), memoryview(bytearray(data)), data):
        out = nabla.run(seed, "mul_kernel", 1, 64, [buffer, 4])
        np.testing.assert_array_equal(out[0], [1, 4, 9, 16])
    assert bytes(buffer) == data


def test_typed_memoryview(seed):
    view = memoryview(array.array("f", [2.0, 3.0]))
    np.testing.assert_array_equal(nabla.run(seed, "mul_kernel", 1, 64, [view, 2])[0],
                                  [4, 9])


def test_bytes_reshaped_to_a_static_shape(fills):
    data = bytearray(np.arange(8, dtype=np.float32).tobytes())
    out = nabla.run(fills, "scale", 1, 8, [data, 2])
    np.testing.assert_array_equal(out[0], 2 * np.arange(8).reshape(2, 4))


BYTES_PARAMETER = """
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%raw: memref<?xi8>, %y: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %y[%i] : memref<?xf32>
      gpu.return
    }
  }
}
"""


def test_a_pointer_raised_as_bytes_takes_any_array():
    # A pointer parameter the kernel never reads is raised as memref<?xi8>:
    # it takes an array of any dtype as its bytes, as nabla-run does, and
    # the output keeps the array's dtype and shape.
    module = nabla.Module.parse(BYTES_PARAMETER)
    u = np.arange(12, dtype=np.float32).reshape(3, 4)
    for outputs in (nabla.run(module, "k", 1, 4, [u, np.zeros(4, np.float32)]),
                    nabla.Kernel(module, "k")(u, np.zeros(4, np.float32),
                                              grid=(1,), block=(4,))):
        assert outputs[0].dtype == np.float32 and outputs[0].shape == (3, 4)
        np.testing.assert_array_equal(outputs[0], u)
        np.testing.assert_array_equal(outputs[1], 1)
    with pytest.raises(ValueError, match="must be C-contiguous"):
        nabla.run(module, "k", 1, 4, [u.T, np.zeros(4, np.float32)])


class HostArray:
    """A minimal foreign host array: only __array_interface__."""

    def __init__(self, array):
        self._array = array
        self.__array_interface__ = array.__array_interface__


def test_array_interface_object(seed):
    host = HostArray(np.array([3.0, -1.0], np.float32))
    out = nabla.run(seed, "mul_kernel", 1, 64, [host, 2])
    np.testing.assert_array_equal(out[0], [9, 1])


def test_strided_array_is_packed(seed):
    a = np.arange(8, dtype=np.float32)[::2]
    np.testing.assert_array_equal(nabla.run(seed, "mul_kernel", 1, 64, [a, 4])[0],
                                  a * a)


class DeviceArray:
    """Looks like a CuPy array: only __cuda_array_interface__."""

    def __init__(self, **changes):
        self.__cuda_array_interface__ = dict(
            {"shape": (4,), "typestr": "<f4", "data": (0x7f0000000000, False),
             "version": 3, "strides": None, "stream": 1}, **changes)


@pytest.mark.parametrize("target", ["vulkan", "hip"])
def test_device_arrays_are_cuda_only(seed, target):
    # Device arrays are used in place by the CUDA back end only (the in-place
    # launch itself: test/Integration/test_fake_drivers.py); elsewhere they
    # are refused before a device is opened (so also without a GPU).
    message = (r"mul_kernel: parameter #0 'A' \(memref<\?xf32>\) got a device "
               r"array \(DeviceArray with __cuda_array_interface__\): device "
               r"arrays are used in place on the CUDA back end \(target='cuda'\), "
               f"and this launch runs on {target}")
    with pytest.raises(TypeError, match=message):
        nabla.run(seed, "mul_kernel", 1, 64, [DeviceArray(), 4], target=target)
    with pytest.raises(TypeError, match=message):
        seed.kernel("mul_kernel")(DeviceArray(), 4, grid=1, block=64, target=target)


def test_device_array_for_a_scalar_is_refused(seed):
    with pytest.raises(TypeError, match=r"parameter #1 'n' \(index\) got a device array"):
        nabla.run(seed, "mul_kernel", 1, 64, [np.zeros(4, np.float32), DeviceArray()],
                  target="cuda")


@pytest.mark.parametrize("changes, error, message", [
    ({"typestr": "<f8"}, TypeError, r"needs dtype float32, got float64 \(a device array\)"),
    ({"shape": ()}, ValueError, r"does not accept shape \(\)"),
    ({"shape": (4,), "strides": (8,)}, ValueError, r"must be C-contiguous"),
    ({"data": (0x7f0000000000, True)}, TypeError, r"read-only device array"),
    ({"data": (0, False)}, ValueError, r"null pointer"),
    ({"mask": object()}, TypeError, r"masked device arrays"),
    ({"stream": 0}, ValueError, r"stream 0 is not a CUDA stream"),
    ({"version": 9}, TypeError, r"version 9 is not supported"),
    ({"typestr": "nonsense"}, TypeError, r"malformed __cuda_array_interface__"),
])
def test_device_array_interface_is_checked(seed, changes, error, message):
    # Checked before compilation and before a device is opened.
    with pytest.raises(error, match=r"mul_kernel: parameter #0 'A' .*" + message):
        nabla.run(seed, "mul_kernel", 1, 64, [DeviceArray(**changes), 4],
                  target="cuda")


def test_device_arrays_choose_cuda(seed, monkeypatch):
    # Without a target (and without NABLA_TARGET), a device array means CUDA.
    monkeypatch.delenv("NABLA_TARGET", raising=False)
    targets = []

    def no_device(target=None, index=-1):
        targets.append(target)
        raise RuntimeError("stop here")

    monkeypatch.setattr(nabla._run, "device", no_device)
    with pytest.raises(RuntimeError, match="stop here"):
        nabla.run(seed, "mul_kernel", 1, 64, [DeviceArray(), 4])
    assert targets == ["cuda"]


# --- nabla.Kernel ----------------------------------------------------------

def test_kernel_compiles_once(seed, monkeypatch):
    compiles = []
    real = nabla.compile

    def counting(*args, **kwargs):
        compiles.append(args[1] if len(args) > 1 else kwargs.get("target"))
        return real(*args, **kwargs)

    monkeypatch.setattr(nabla._run, "compile", counting)
    square = seed.kernel("mul_kernel")
    assert compiles == []  # nothing compiled before the first call
    a = np.array([1, 2, 3], np.float32)
    first = square(a, 3, grid=1, block=64)
    second = square(first[0], np.int64(3), grid=1, block=64)
    np.testing.assert_array_equal(second[0], a ** 4)
    assert compiles == ["spirv"]
    square(a, 3, grid=1, block=32)  # SPIR-V compiles the workgroup size in
    assert compiles == ["spirv", "spirv"]


def test_kernel_parameters(seed):
    grad = nabla.Kernel(seed, "grad_mul_kernel")
    assert [(p.position, p.name, p.type, p.kind) for p in grad.parameters] == [
        (0, "A", "memref<?xf32>", "buffer"), (1, "dA", "memref<?xf32>", "buffer"),
        (2, "n", "index", "scalar")]
    assert grad.parameters[0].element == "f32" and grad.parameters[0].shape == (None,)
    assert "grad_mul_kernel(A: memref<?xf32>, dA: memref<?xf32>, n: index)" in repr(grad)


def test_kernel_snapshots_the_module():
    m = nabla.Module.parse(SEED)
    square = m.kernel("mul_kernel")
    nabla.PassManager("builtin.module(nabla-differentiate)").run(m)
    np.testing.assert_array_equal(square(np.float32([2]), 1, grid=1, block=64)[0], [4])


def test_kernel_of_a_module_without_source_names(seed):
    # A printed-and-reparsed module names arguments %arg0...; a module made
    # by clone keeps the names of the text it was parsed from.
    assert [p.name for p in seed.clone().kernel("mul_kernel").parameters] == ["A", "n"]
    plain = nabla.Module(seed._native.clone())
    assert [p.name for p in plain.kernel("mul_kernel").parameters] == [None, None]
    with pytest.raises(TypeError, match=r"mul_kernel: parameter #1 \(index\) expects "
                       "an integer"):
        plain.kernel("mul_kernel")(np.float32([1]), 1.0, grid=1, block=64)


def test_kernel_errors(seed):
    with pytest.raises(ValueError, match="unknown kernel 'nope' .*mul_kernel"):
        seed.kernel("nope")
    with pytest.raises(TypeError, match="expects a nabla.Module"):
        nabla.Kernel("module", "mul_kernel")
    square = seed.kernel("mul_kernel")
    with pytest.raises(ValueError, match="takes 2 arguments, got 1"):
        square(np.float32([1]), grid=1, block=64)
    with pytest.raises(TypeError):
        square(np.float32([1]), 1)  # grid and block are required
    with pytest.raises(ValueError, match="unknown run target 'opencl'"):
        square(np.float32([1]), 1, grid=1, block=64, target="opencl")


# --- error messages ----------------------------------------------------------

def expect(error, pattern, module, kernel, args):
    with pytest.raises(error, match=pattern):
        nabla.run(module, kernel, 1, 64, args)


def test_scalar_errors_name_the_parameter(seed, fills):
    a = np.zeros(4, np.float32)
    expect(TypeError, r"mul_kernel: parameter #1 'n' \(index\) expects an integer, "
           r"got float 1.5", seed, "mul_kernel", [a, 1.5])
    expect(TypeError, r"parameter #1 'n' \(index\) expects an integer, got float32",
           seed, "mul_kernel", [a, np.float32(2)])
    expect(ValueError, r"parameter #1 'n' \(index\) must be non-negative, got -1",
           seed, "mul_kernel", [a, -1])
    expect(ValueError, r"parameter #1 'n' \(index\): 2147483648 does not fit the "
           r"32-bit index of SPIR-V", seed, "mul_kernel", [a, 2 ** 31])
    expect(ValueError, r"fill_i32: parameter #1 'value' \(i32\): 3000000000 does "
           r"not fit i32 \[-2147483648, 2147483647\]", fills, "fill_i32",
           [np.zeros(1, np.int32), 3_000_000_000, 1])
    expect(ValueError, r"parameter #1 'value' \(i64\): .* does not fit i64",
           fills, "fill_i64", [np.zeros(1, np.int64), 2 ** 63, 1])
    expect(ValueError, r"parameter #1 'value' \(f32\): 1e\+40 is out of range for f32",
           fills, "fill_f32", [np.zeros(1, np.float32), 1e40, 1])
    expect(TypeError, r"parameter #1 'value' \(f32\) expects a real number, got "
           r"complex", fills, "fill_f32", [np.zeros(1, np.float32), 1j, 1])
    expect(TypeError, r"parameter #1 'n' \(index\) is a scalar, got an array of "
           r"dtype float32 and shape \(4,\)", seed, "mul_kernel", [a, a])
    expect(TypeError, r"parameter #1 'n' \(index\) is a scalar: pass a Python or "
           r"NumPy integer, got a buffer", seed, "mul_kernel", [a, bytearray(4)])
    expect(TypeError, r"parameter #1 'n' \(index\) is a scalar: pass a Python or "
           r"NumPy integer, got str", seed, "mul_kernel", [a, "4"])
    expect(TypeError, r"parameter #1 'n' \(index\) is index, got \('f32', 4.0\)",
           seed, "mul_kernel", [a, ("f32", 4.0)])
    expect(TypeError, r"the explicit form is \('index', value\)", seed,
           "mul_kernel", [a, ("index",)])


def test_buffer_errors_name_the_parameter(seed, fills):
    expect(TypeError, r"mul_kernel: parameter #0 'A' \(memref<\?xf32>\) needs a "
           r"numpy array or a buffer .*got int 3", seed, "mul_kernel", [3, 3])
    expect(TypeError, r"parameter #0 'A' \(memref<\?xf32>\) needs a numpy array.*"
           r"got list", seed, "mul_kernel", [[1.0, 2.0], 2])
    expect(TypeError, r"parameter #0 'A' \(memref<\?xf32>\) needs dtype float32, "
           r"got float64", seed, "mul_kernel", [np.zeros(4), 4])
    expect(TypeError, r"needs dtype float32, got int32", seed, "mul_kernel",
           [array.array("i", [1, 2]), 2])
    expect(TypeError, r"needs dtype float32, got >f4", seed, "mul_kernel",
           [np.zeros(4, ">f4"), 4])
    # A 1-D memref takes N-D arrays as their elements in memory order: a
    # transposed one has no such order.
    expect(ValueError, r"parameter #0 'A' \(memref<\?xf32>\): an array of shape "
           r"\(4, 4\) is passed to the 1-D memref .* must be C-contiguous",
           seed, "mul_kernel", [np.zeros((4, 4), np.float32).T, 4])
    expect(ValueError, r"scale: parameter #0 'M' \(memref<2x4xf32>\) does not "
           r"accept shape \(4, 2\)", fills, "scale", [np.zeros((4, 2), np.float32), 1])
    expect(ValueError, r"a byte buffer of 6 bytes is not a whole number of float32",
           seed, "mul_kernel", [bytearray(6), 1])
    expect(ValueError, r"parameter #0 'M' .* does not accept 4 float32 elements",
           fills, "scale", [bytearray(16), 1])


def test_index_buffers_round_trip_on_vulkan(fills):
    # SPIR-V's index is 32-bit: the runtime narrows the int64 elements going
    # in and widens them coming back (they were silently misread before).
    out = nabla.run(fills, "index_buffer", 1, 4, [np.array([-5, 0, 7, 2**31 - 1], np.int64)])
    np.testing.assert_array_equal(out[0], [-15, 0, 21, (2**31 - 1) * 3 - 2**32])
    with pytest.raises(RuntimeError, match="does not fit the 32-bit SPIR-V index"):
        nabla.run(fills, "index_buffer", 1, 4, [np.array([0, 2**31, 0, 0], np.int64)])


def test_unsupported_types_are_named():
    # Refused before compilation (SPIR-V cannot even take an i1 parameter).
    m = nabla.Module.parse("""
    module attributes {gpu.container_module} {
      gpu.module @kernels {
        gpu.func @half(%h: memref<?xf8E4M3FN>) kernel {
          gpu.return
        }
        gpu.func @flag(%out: memref<?xf32>, %f: i1) kernel {
          gpu.return
        }
      }
    }""")
    expect(TypeError, r"half: parameter #0 'h' \(memref<\?xf8E4M3FN>\) has "
           r"element type f8E4M3FN; nabla.run passes buffers of f16, bf16, "
           r"f32, f64, i8, i16, i32, i64 and index", m, "half",
           [np.zeros(2, np.uint8)])
    expect(TypeError, r"flag: parameter #1 'f' \(i1\) is a scalar of a type "
           r"nabla.run does not pass", m, "flag", [np.zeros(2, np.float32), True])


def test_errors_come_before_compilation_and_devices(seed, monkeypatch):
    def no_compile(*args, **kwargs):
        raise AssertionError("compiled before checking the arguments")
    monkeypatch.setattr(nabla._run, "compile", no_compile)
    for target in ("vulkan", "cuda", "hip"):
        with pytest.raises(TypeError, match="expects an integer"):
            nabla.run(seed, "mul_kernel", 1, 64, [np.zeros(1, np.float32), 0.5],
                      target=target)


def test_argument_count(seed):
    expect(ValueError, "kernel 'mul_kernel' takes 2 arguments, got 3", seed,
           "mul_kernel", [np.zeros(1, np.float32), 1, 1])


RELOCATED = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant}
    reloc.global @log : memref<4xf32> {key = "Main.log"}
    gpu.func @copy(%A: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %t = reloc.get_global @coeffs : memref<4xf32>
      %c = memref.load %t[%i] : memref<4xf32>
      %a = memref.load %A[%i] : memref<?xf32>
      %p = arith.mulf %a, %c : f32
      %l = reloc.get_global @log : memref<4xf32>
      memref.store %p, %l[%i] : memref<4xf32>
      gpu.return
    }
  }
}"""


def test_relocated_objects_from_buffers():
    # Writable relocated objects are updated in place, whatever they are.
    m = nabla.Module.parse(RELOCATED)
    log = array.array("f", [0.0] * 4)
    nabla.run(m, "copy", 1, 4, [array.array("f", [1, 2, 3, 4])],
              relocs={"host.coeffs": bytes(np.float32([1, 10, 100, 1000]).data),
                      "Main.log": log})
    assert list(log) == [1.0, 20.0, 300.0, 4000.0]
    with pytest.raises(TypeError, match="relocation record 'Main.log' is written "
                       "by the kernel: pass a writable array"):
        nabla.run(m, "copy", 1, 4, [np.zeros(4, np.float32)],
                  relocs={"host.coeffs": np.zeros(4, np.float32),
                          "Main.log": bytes(16)})


def test_kernel_made_by_differentiation_has_parameters():
    # nabla.kernel_adjoint creates the kernel: described after differentiation.
    source = open(os.path.join(ROOT, "test", "Integration", "gradients",
                               "deterministic.mlir")).read()
    adjoint = nabla.Module.parse(source).kernel("scale_ordered")
    assert len(adjoint.parameters) == 8
    assert adjoint.parameters[6].type == "index"
    assert adjoint.parameters[7].type == "memref<?xi32>"


def test_pack_args_for_direct_launches(seed):
    # bench/ packs with nabla._pack_args and calls _nabla.launch itself.
    compiled = nabla.compile(seed, "spirv", workgroup_size=64)
    entry = next(k for k in compiled.manifest["kernels"] if k["name"] == "mul_kernel")
    a = np.float32([1, 2, 3])
    packed, shapes, _ = nabla._pack_args(entry, [a, ("index", 3)], {})
    outs, _ = nabla._nabla.launch(compiled.manifest_text, compiled.artifacts,
                                  "mul_kernel", [1], [64], packed, shapes, {},
                                  "vulkan", -1, 60)
    np.testing.assert_array_equal(np.frombuffer(bytes(outs[0]), np.float32), a * a)
