# ===- nabla/_arguments.py - Python values as kernel parameters ---------=== #
#
# How `nabla.run` and `nabla.Kernel` turn what a user passes into the bytes
# the runtime launches with, typed from the kernel's signature (the
# manifest's parameter list): plain Python and NumPy scalars for scalar
# parameters (range-checked in the parameter's MLIR type), and numpy arrays,
# buffer-protocol objects or `__array_interface__` objects for memrefs
# (viewed, not copied, when already contiguous), and on CUDA objects with
# `__cuda_array_interface__` (CuPy) passed in place as device pointers. A
# 1-D memref (a C++ pointer) also takes a C-contiguous N-D array, as its
# elements in memory order. Every error names the parameter (position, name
# when known, MLIR type) and what it expects.
#
# ===----------------------------------------------------------------------=== #
import collections
import re

import numpy as np

# Host dtypes of the scalar and element types the runtime launches with
# (little-endian: the bytes go to the device as they are).
DTYPES = {"f32": np.dtype("<f4"), "f64": np.dtype("<f8"),
          "i8": np.dtype("i1"), "i16": np.dtype("<i2"),
          "i32": np.dtype("<i4"), "i64": np.dtype("<i8"),
          "index": np.dtype("<i8")}

# Buffers also take the narrower element types; a signless integer memref
# takes the unsigned dtype of its width too, and i8 takes bool (C++'s bool
# in memory).
# numpy has no bfloat16: a bf16 buffer holds its bits (uint16).
ELEMENT_DTYPES = dict(DTYPES, f16=np.dtype("<f2"), bf16=np.dtype("<u2"),
                      i8=np.dtype("i1"), i16=np.dtype("<i2"))
_ELEMENT_NAMES = "f16, bf16, f32, f64, i8, i16, i32, i64 and index"


def element_dtype_accepts(expected, dtype):
    """True if a buffer of `dtype` binds to elements of dtype `expected`."""
    if dtype == expected:
        return True
    # f16 and bf16 buffers also take their bits as int16/uint16.
    if (expected in (ELEMENT_DTYPES["f16"], ELEMENT_DTYPES["bf16"])
            and dtype.kind in "iu" and dtype.itemsize == 2
            and dtype.byteorder in "<|="):
        return True
    if expected.kind != "i":
        return False
    return ((dtype.kind == "u" and dtype.itemsize == expected.itemsize
             and dtype.byteorder in "<|=")
            or (expected.itemsize == 1 and dtype == np.dtype(bool)))


# i8 and i16 (`char`, `short` parameters) take signed or unsigned values of
# their width, as nabla-run's i8:V and i16:V do.
_INTEGER_RANGES = {"i8": (-2 ** 7, 2 ** 8 - 1), "i16": (-2 ** 15, 2 ** 16 - 1),
                   "i32": (-2 ** 31, 2 ** 31 - 1),
                   "i64": (-2 ** 63, 2 ** 63 - 1),
                   "index": (0, 2 ** 63 - 1)}
# index is 32-bit in SPIR-V; the Vulkan runtime narrows it.
VULKAN_INDEX_MAX = 2 ** 31 - 1


class Parameter(collections.namedtuple(
        "Parameter", "position name type kind element shape optional",
        defaults=(False,))):
    """One kernel parameter as a caller passes it: its position in `args`,
    its name in the MLIR source (None when unknown), its MLIR type
    ("memref<?xf32>", "index"), kind ("buffer" or "scalar") and, for
    buffers, element type and shape (None for dynamic extents)."""

    def label(self, kernel=None):
        name = f" '{self.name}'" if self.name else ""
        where = f"{kernel}: " if kernel else ""
        return f"{where}parameter #{self.position}{name} ({self.type})"


def is_own(param):
    """Whether the caller passes an argument for a manifest parameter (the
    launch sets relocation tables, presence flags, the dynamic shared
    memory size of a gradient kernel and its global-memory tape)."""
    return not ("reloc" in param or "presence_of" in param
                or param.get("dynamic_shared_memory_bytes")
                or param.get("tape"))


def parameters(entry, names=None):
    """The caller-visible parameters of a manifest kernel entry (the table
    strategy's relocation parameters are passed through `relocs`); `names`,
    one per parameter (None or "" where unknown), is ignored when its length
    differs."""
    own = [p for p in entry["params"] if is_own(p)]
    optional = {p["presence_of"] for p in entry["params"] if "presence_of" in p}
    if names is None or len(names) != len(own):
        names = [None] * len(own)
    return [Parameter(k, name or None, p["type"], p["kind"], p.get("element"),
                      tuple(p.get("shape") or ()), p["index"] in optional)
            for k, (p, name) in enumerate(zip(own, names))]


def signature(kernel, params):
    """`kernel(A: memref<?xf32>, n: i32)`: how messages show a kernel's
    parameters (`#k` for a parameter without a name)."""
    listed = ", ".join(f"{p.name or '#' + str(p.position)}: {p.type}"
                       + (" or None" if p.optional else "")
                       for p in params)
    return f"{kernel}({listed})"


def merge_names(ssa, located):
    """A kernel's argument names from two sources: name locations
    (`loc("alpha")`, "" where absent) first, then the SSA names of the
    text."""
    if not located:
        return ssa
    if not ssa or len(ssa) != len(located):
        return [name or None for name in located]
    return [loc or name for loc, name in zip(located, ssa)]


def argument_names(text):
    """{kernel: [argument names]} for every `gpu.func` written in MLIR text:
    the SSA names of its arguments, which parsing does not keep. Kernels
    defined twice (in two gpu.modules) are left out."""
    names, seen = {}, set()
    for match in re.finditer(r"gpu\.func\s+@([\w$.]+)\s*\(", text):
        kernel, depth, end = match.group(1), 1, match.end()
        while end < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        signature = text[match.end():end - 1]
        if kernel in seen:
            names.pop(kernel, None)
            continue
        seen.add(kernel)
        names[kernel] = re.findall(r"%([\w$.-]+)\s*:", signature)
    return names


def _is_buffer_like(value):
    if isinstance(value, np.ndarray) or hasattr(value, "__array_interface__") \
            or hasattr(value, "__array__"):
        return True
    try:
        memoryview(value)
    except TypeError:
        return False
    return True


def _is_number(value):
    return isinstance(value, (bool, int, float, complex, np.generic))


def _describe(value):
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    if _is_number(value):
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__


def is_device_array(value):
    """An object only a GPU can read (CuPy, PyTorch CUDA tensors): it has
    `__cuda_array_interface__` and no host interface."""
    return (hasattr(value, "__cuda_array_interface__")
            and not hasattr(value, "__array_interface__"))


def device_array_error(what, value, target=None):
    where = (f"this launch runs on {target}" if target else
             "only kernel buffer arguments of a CUDA launch take them")
    return TypeError(
        f"{what} got a device array ({type(value).__name__} with "
        f"__cuda_array_interface__): device arrays are used in place on the "
        f"CUDA back end (target='cuda'), and {where}; pass a host array, "
        f"e.g. cupy.asnumpy(x)")


class DeviceArray(collections.namedtuple(
        "DeviceArray", "source pointer nbytes shape dtype stream")):
    """A buffer argument in CUDA device memory (`source` has
    `__cuda_array_interface__`): launched in place, without host copies."""


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def as_device_buffer(param, value, what):
    """Checks a `__cuda_array_interface__` object (versions 0 to 3) against
    memref parameter `param`: dtype and shape as for host buffers,
    C-contiguous, writable, no mask. Returns a DeviceArray whose stream is
    the producer's (0: nothing to wait for)."""
    try:
        interface = value.__cuda_array_interface__
    except Exception as error:  # a property may raise anything
        raise TypeError(f"{what}: reading __cuda_array_interface__ failed: "
                        f"{error}") from None
    if not isinstance(interface, dict):
        raise TypeError(f"{what}: __cuda_array_interface__ is not a dict")
    for key in ("shape", "typestr", "data"):
        if key not in interface:
            raise TypeError(f"{what}: __cuda_array_interface__ has no "
                            f"{key!r}")
    version = interface.get("version", 0)
    if not isinstance(version, int) or not 0 <= version <= 3:
        raise TypeError(f"{what}: __cuda_array_interface__ version "
                        f"{version!r} is not supported (0 to 3)")
    try:
        shape = tuple(int(e) for e in interface["shape"])
        dtype = np.dtype(interface["typestr"])
        pointer, readonly = interface["data"]
        pointer = int(pointer)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{what}: malformed __cuda_array_interface__: "
                        f"{error}") from None
    expected = ELEMENT_DTYPES.get(param.element)
    if expected is None:
        raise TypeError(f"{what} has element type {param.element}; nabla.run "
                        f"passes buffers of {_ELEMENT_NAMES}")
    if not element_dtype_accepts(expected, dtype):
        raise TypeError(f"{what} needs dtype {expected.name}, got {dtype} "
                        f"(a device array)")
    if any(e < 0 for e in shape):
        raise ValueError(f"{what}: negative extent in shape {shape}")
    count = int(np.prod(shape, dtype=object)) if shape else 1
    # An N-D array for a 1-D memref: its elements in memory order (it must be
    # C-contiguous to be used in place anyway).
    launched = ((count,) if len(param.shape) == 1 and len(shape) > 1
                else shape)
    if len(launched) != len(param.shape) or any(
            e is not None and e != s for e, s in zip(param.shape, launched)):
        raise ValueError(f"{what} does not accept shape {shape} (the memref "
                         f"is {param.type})")
    strides = interface.get("strides")
    if (strides is not None and count > 1
            and tuple(strides) != _c_strides(shape, dtype.itemsize)):
        raise ValueError(f"{what}: a device array must be C-contiguous to be "
                         f"used in place, its strides are {tuple(strides)}; "
                         f"pass cupy.ascontiguousarray(x)")
    if interface.get("mask") is not None:
        raise TypeError(f"{what}: masked device arrays are not supported")
    if readonly:
        raise TypeError(f"{what} is a read-only device array; the kernel "
                        f"updates its buffers in place")
    if count and not pointer:
        raise ValueError(f"{what}: a device array of {count} elements has a "
                         f"null pointer")
    stream = interface.get("stream")
    if stream is None:
        stream = 0
    elif isinstance(stream, bool) or not isinstance(stream, int) or stream <= 0:
        raise ValueError(f"{what}: __cuda_array_interface__ stream "
                         f"{stream!r} is not a CUDA stream (None, 1, 2 or a "
                         f"handle)")
    return DeviceArray(value, pointer, count * dtype.itemsize, launched,
                       dtype, stream)


def as_array(value, what):
    """`value` as a numpy array without copying: a numpy array, any
    buffer-protocol object (bytearray, memoryview, array.array) or an object
    with `__array_interface__` / `__array__`."""
    if isinstance(value, np.ndarray):
        return value
    if is_device_array(value):
        raise device_array_error(what, value)
    if _is_number(value) or not _is_buffer_like(value):
        raise TypeError(f"{what} needs a numpy array or a buffer (buffer "
                        f"protocol or __array_interface__), got "
                        f"{_describe(value)}")
    try:
        if hasattr(value, "__array_interface__") or hasattr(value, "__array__"):
            return np.asarray(value)
        # bytes and bytearray through a memoryview: np.asarray(b"...") would
        # be one string, not bytes.
        return np.asarray(memoryview(value))
    except (TypeError, ValueError) as error:
        raise TypeError(f"{what} cannot be read as an array: {error}") from None


def as_buffer(param, value, what):
    """Checks `value` against memref parameter `param` (a Parameter or a
    manifest entry with element and shape); returns it as a numpy array of
    the element dtype, sharing memory with `value` where possible. Untyped
    byte buffers (bytearray, bytes, memoryview of format 'B') are viewed as
    the element type. A 1-D memref takes a C-contiguous N-D array too (its
    elements in memory order; `launch_shape` gives the shape launched)."""
    element = param.element if isinstance(param, Parameter) else param["element"]
    shape = tuple(param.shape if isinstance(param, Parameter)
                  else param["shape"])
    mlir_type = param.type if isinstance(param, Parameter) else param["type"]
    dtype = ELEMENT_DTYPES.get(element)
    if dtype is None:
        raise TypeError(f"{what} has element type {element}; nabla.run passes "
                        f"buffers of {_ELEMENT_NAMES}")
    array = as_array(value, what)
    if (not isinstance(value, np.ndarray) and array.dtype.itemsize == 1
            and array.dtype.kind in "ui" and dtype.itemsize != 1):
        array = _view_bytes(array, dtype, shape, what)
    if element == "i8" and len(shape) == 1 and array.dtype.itemsize != 1:
        # A pointer raised as bytes (never read, or read as several types)
        # takes any array as its bytes, as nabla-run does; the output keeps
        # the array's dtype and shape (launch_shape counts the bytes).
        if not array.flags.c_contiguous:
            raise ValueError(f"{what}: an array passed as bytes "
                             f"({mlir_type}) must be C-contiguous")
        if shape[0] is not None and array.nbytes != shape[0]:
            raise ValueError(f"{what} takes {shape[0]} bytes, got an array "
                             f"of {array.nbytes}")
        return array
    if not element_dtype_accepts(dtype, array.dtype):
        raise TypeError(f"{what} needs dtype {dtype.name}, got {array.dtype}")
    if len(shape) == 1 and array.ndim > 1:
        if not array.flags.c_contiguous:
            raise ValueError(
                f"{what}: an array of shape {array.shape} is passed to the "
                f"1-D memref ({mlir_type}) as its elements in memory order, "
                f"so it must be C-contiguous; pass np.ascontiguousarray(x) "
                f"or x.ravel()")
        if shape[0] is not None and array.size != shape[0]:
            raise ValueError(f"{what} does not accept shape {array.shape} "
                             f"({array.size} elements; the memref is "
                             f"{mlir_type})")
        return array
    if array.ndim != len(shape) or any(
            e is not None and e != s for e, s in zip(shape, array.shape)):
        raise ValueError(f"{what} does not accept shape {array.shape} (the "
                         f"memref is {mlir_type})")
    return array


def launch_shape(param, array):
    """The shape the runtime launches buffer `array` with for memref
    parameter `param` (a manifest entry): flat for an N-D array passed to a
    1-D memref."""
    if (param.get("element") == "i8" and array.dtype.itemsize != 1
            and len(param.get("shape") or ()) == 1):
        return [array.nbytes]  # an array passed as bytes (as_buffer)
    if len(param.get("shape") or ()) == 1 and array.ndim > 1:
        return [array.size]
    return list(array.shape)


def _view_bytes(array, dtype, shape, what):
    if array.ndim != 1 or not array.flags.c_contiguous:
        raise ValueError(f"{what}: a byte buffer must be flat and contiguous "
                         f"to be viewed as {dtype.name}")
    if array.nbytes % dtype.itemsize:
        raise ValueError(f"{what}: a byte buffer of {array.nbytes} bytes is "
                         f"not a whole number of {dtype.name} elements")
    array = array.view(np.uint8).view(dtype)
    if len(shape) > 1 and all(e is not None for e in shape):
        if array.size != int(np.prod(shape)):
            raise ValueError(f"{what} does not accept {array.size} "
                             f"{dtype.name} elements (the shape is "
                             f"{shape})")
        array = array.reshape(shape)
    return array


def pack_scalar(param, value, what, index_max=_INTEGER_RANGES["index"][1]):
    """The little-endian bytes of `value` in scalar parameter `param`'s
    type. Accepts Python and NumPy scalars, 0-d arrays and the explicit
    (type, value) form; integer parameters reject floats, float parameters
    accept integers. Values out of the type's range raise ValueError."""
    mlir_type = param.type
    if mlir_type not in DTYPES:
        raise TypeError(f"{what} is a scalar of a type nabla.run does not "
                        f"pass (it passes f32, f64, i8, i16, i32, i64 and "
                        f"index)")
    if isinstance(value, tuple):
        if len(value) != 2:
            raise TypeError(f"{what}: the explicit form is ({mlir_type!r}, "
                            f"value), got {value!r}")
        if value[0] != mlir_type:
            raise TypeError(f"{what} is {mlir_type}, got {value!r}")
        value = value[1]
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise TypeError(f"{what} is a scalar, got {_describe(value)}")
        value = value[()]
    if not _is_number(value):
        if is_device_array(value):
            raise device_array_error(what, value)
        kind = "a buffer" if _is_buffer_like(value) else type(value).__name__
        raise TypeError(f"{what} is a scalar: pass a Python or NumPy "
                        f"{'integer' if mlir_type[0] == 'i' else 'number'}, "
                        f"got {kind}")
    if mlir_type in ("f32", "f64"):
        return _pack_float(mlir_type, value, what)
    return _pack_integer(mlir_type, value, what, index_max)


def _pack_float(mlir_type, value, what):
    if not isinstance(value, (bool, int, float, np.bool_, np.integer,
                              np.floating)):
        raise TypeError(f"{what} expects a real number, got {_describe(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{what}: {value} is out of range for "
                         f"{mlir_type}") from None
    dtype = DTYPES[mlir_type]
    if np.isfinite(number) and abs(number) > np.finfo(dtype).max:
        raise ValueError(f"{what}: {value!r} is out of range for {mlir_type} "
                         f"(largest finite value {np.finfo(dtype).max})")
    return np.array(number, dtype=dtype).tobytes()


def _pack_integer(mlir_type, value, what, index_max):
    if not isinstance(value, (bool, int, np.bool_, np.integer)):
        raise TypeError(f"{what} expects an integer, got {_describe(value)}")
    number = int(value)
    low, high = _INTEGER_RANGES[mlir_type]
    dtype = DTYPES[mlir_type]
    # A NumPy unsigned integer of the parameter's width is passed bit for bit
    # (signless MLIR integers: the kernel's ops choose the signedness).
    if (isinstance(value, np.unsignedinteger) and mlir_type != "index"
            and value.dtype.itemsize == dtype.itemsize):
        high = 2 ** (8 * dtype.itemsize) - 1
        dtype = np.dtype(f"<u{dtype.itemsize}")
    if mlir_type == "index" and number < 0:
        raise ValueError(f"{what} must be non-negative, got {number}")
    if mlir_type == "index" and number > index_max:
        raise ValueError(f"{what}: {number} does not fit the 32-bit index of "
                         f"SPIR-V (Vulkan); the largest is {index_max}")
    if not low <= number <= high:
        raise ValueError(f"{what}: {number} does not fit {mlir_type} "
                         f"[{low}, {high}]")
    if number > np.iinfo(dtype).max:  # an unsigned i8/i16 value
        dtype = np.dtype(f"<u{dtype.itemsize}")
    return np.array(number, dtype=dtype).tobytes()
