# ===- nabla/_run.py - Kernel launches: nabla.run and nabla.Kernel ------=== #
#
# Everything between a caller's arguments and the runtime's launch: the
# run target and its device, grid and block checked against the tools'
# limits, arguments checked against the kernel's signature before anything
# is compiled, the compilation a launch needs (only that kernel; SPIR-V per
# block size), the table and patch strategies' relocated objects, and the
# outputs handed back as numpy arrays. `Kernel` keeps the compilations of
# one kernel between calls.
#
# ===----------------------------------------------------------------------=== #
import json
import os

import numpy as np

from . import _nabla
from ._arguments import (ELEMENT_DTYPES, VULKAN_INDEX_MAX, DeviceArray,
                         as_array, as_buffer, as_device_buffer,
                         device_array_error,
                         is_device_array, launch_shape, pack_scalar,
                         parameters as _parameters, signature)
from ._compile import _shared_bytes, compile
from ._ir import Module, PassManager
from ._timing import KernelTimes, _repeat


def device(target=None, index=-1):
    """(name, chip, subgroup size) of the device a run would use."""
    return _nabla.device_info(target or os.environ.get("NABLA_TARGET", "vulkan"),
                              index)


# The tools' limits (nabla/Support/Limits.h), from the native module: the
# most threads any target runs in a workgroup dimension; CUDA's largest grid
# dimension.
_MAX_EXTENT = {"block": _nabla.limits["workgroup_extent"],
               "grid": _nabla.limits["grid_extent"]}


def _dim3(value, what):
    dims = [value] if isinstance(value, (int, np.integer)) else list(value)
    limit = _MAX_EXTENT[what]
    if not 1 <= len(dims) <= 3 or any(not isinstance(d, (int, np.integer))
                                      or not 1 <= d <= limit for d in dims):
        raise ValueError(
            f"{what} must be 1 to 3 integers, each 1 to {limit}, got {value!r}")
    return [int(d) for d in dims]


def _target(target, args=()):
    """The run target: `target`, else $NABLA_TARGET, else CUDA when an
    argument is a CUDA device array, else Vulkan."""
    if not target and "NABLA_TARGET" not in os.environ and any(
            is_device_array(a) for a in args):
        target = "cuda"
    target = target or os.environ.get("NABLA_TARGET", "vulkan")
    if target not in ("vulkan", "cuda", "hip"):
        raise ValueError(f"unknown run target {target!r} (vulkan, cuda or hip)")
    return target


def _described_kernels(module):
    """{kernel: manifest entry} of the kernels as written, before lowering
    (no compilation, no device)."""
    return {k["name"]: k
            for k in json.loads(_nabla.describe_kernels(module._native))}


def _resolve_kernel(kernels, name):
    """The kernel of `kernels` (names as the module has them) that `name`
    designates: itself, or the one kernel whose C++ name it is
    (`mul_kernel` for `_Z10mul_kernelPfi`); None when it designates none,
    ValueError when it designates several."""
    if name in kernels:
        return name
    if not isinstance(name, str):
        raise TypeError(f"a kernel name is a str, got {type(name).__name__}")
    matches = [k for k in sorted(kernels) if _nabla.kernel_name_matches(k, name)]
    if len(matches) > 1:
        raise ValueError(f"{name!r} names several kernels: "
                         f"{_described_names(matches)}; give the module's "
                         f"name or the signature")
    return matches[0] if matches else None


def _described_names(kernels):
    """Kernel names for messages, demangled beside the mangled ones."""
    return ", ".join(k if _nabla.demangle(k) == k
                     else f"{k} ({_nabla.demangle(k)})" for k in kernels)


def _convert_args(kernel, params, args, target):
    """Checks and converts the caller's arguments against the kernel's
    parameters (before anything is compiled or launched): numpy arrays for
    buffers, little-endian bytes for scalars."""
    args = list(args)
    if len(args) != len(params):
        raise ValueError(f"kernel {kernel!r} takes {len(params)} arguments, "
                         f"got {len(args)}: {signature(kernel, params)}")
    index_max = VULKAN_INDEX_MAX if target == "vulkan" else 2 ** 63 - 1
    converted = []
    for param, arg in zip(params, args):
        what = param.label(kernel)
        if arg is None and param.optional:
            # The kernel tests this pointer for null: its presence flag
            # says so, and a placeholder is bound.
            converted.append(None)
        elif param.kind != "buffer":
            converted.append(pack_scalar(param, arg, what, index_max))
        elif not is_device_array(arg):
            converted.append(as_buffer(param, arg, what))
        elif target != "cuda":
            raise device_array_error(what, arg, target)
        else:
            converted.append(as_device_buffer(param, arg, what))
    return converted

def _compile_for(module, target, block, device_info, kernel,
                 shared_memory=None, cache=True):
    """The compilation `run` launches on `target`'s device: SPIR-V with the
    workgroup size (and dynamic shared memory) compiled in, or PTX/HSACO for
    the device's chip; only `kernel` and what it needs."""
    name, chip, subgroup = device_info
    if target == "vulkan":
        return compile(module, "spirv", workgroup_size=block,
                       subgroup_size=subgroup, kernel=kernel,
                       dynamic_shared_memory=shared_memory, cache=cache,
                       loop_limit=_nabla.loop_iteration_limit(name))
    return compile(module, "nvvm" if target == "cuda" else "rocdl", chip=chip,
                   kernel=kernel, cache=cache)


def _pack_args(kernel, args, relocs, names=None, target=None):
    """Packs `args` for manifest entry `kernel` and the table strategy's
    parameters from `relocs` ({key: array}) for `_nabla.launch`; kept for
    scripts that launch compiled kernels themselves (bench/)."""
    converted = _convert_args(kernel["name"], _parameters(kernel, names), args,
                              target)
    arrays = {p["reloc"]: as_buffer(p, relocs[p["reloc"]],
                                    f"relocation record {p['reloc']!r}")
              for p in kernel["params"] if "reloc" in p}
    return _interleave(kernel, converted, arrays)


def _interleave(kernel, converted, relocs):
    """Interleaves the converted arguments of the kernel's own parameters
    with the arrays of the parameters the table strategy added (from
    `relocs`); returns (packed, shapes, sources), sources[k] being the array
    parameter k came from (None for scalars)."""
    packed, shapes, sources = [], [], []
    remaining = iter(converted)
    own = {}
    for param in kernel["params"]:
        if param.get("tape"):
            # The launch sizes and allocates the global-memory tape.
            packed.append(np.zeros(0, np.int32))
            shapes.append([0])
            sources.append(None)
            continue
        if param.get("dynamic_shared_memory_bytes"):
            # The launch sets it (the launch's dynamic shared bytes).
            packed.append(np.int32(0).tobytes())
            shapes.append([])
            sources.append(None)
            continue
        if "presence_of" in param:
            # 0 when the caller passed None for the buffer, else 1.
            present = own[param["presence_of"]] is not None
            packed.append(np.int32(present).tobytes())
            shapes.append([])
            sources.append(None)
            continue
        value = relocs[param["reloc"]] if "reloc" in param else next(remaining)
        own[param["index"]] = value
        if value is None:
            rank = len(param.get("shape") or [None])
            placeholder = np.zeros((0,) * rank,
                                   ELEMENT_DTYPES[param["element"]])
            packed.append(placeholder)
            shapes.append([0] * rank)
            sources.append(None)
            continue
        if isinstance(value, DeviceArray):
            packed.append((value.pointer, value.nbytes, value.stream))
            shapes.append(list(value.shape))
            sources.append(value)
            continue
        if isinstance(value, bytes):
            packed.append(value)
            shapes.append([])
            sources.append(None)
            continue
        packed.append(np.ascontiguousarray(value))
        shapes.append(launch_shape(param, value))
        sources.append(value)
    return packed, shapes, sources


def _relocated_objects(manifest, kernel, relocs):
    """The objects of the relocation records kernel `kernel` reads, by key,
    as numpy arrays sharing memory with what the caller passed (writable
    records are updated through them)."""
    records = {r["key"]: r for r in manifest.get("relocations", [])}
    for key in relocs:
        if key not in records:
            raise ValueError(f"relocs names {key!r}, which is not a "
                             f"relocation record of these kernels")
    needed = [p["reloc"] for p in kernel["params"] if "reloc" in p]
    needed += [r["key"] for r in manifest.get("relocations", [])
               if r["module"] == kernel["module"] and r["strategy"] == "patch"]
    objects = {}
    for key in needed:
        if key not in relocs:
            raise ValueError(f"kernel {kernel['name']!r} reads the relocated "
                             f"object {key!r}: pass it in relocs")
        record, what = records[key], f"relocation record {key!r}"
        if record.get("pointer"):
            array = as_array(relocs[key], what)
        else:
            array = as_buffer(record, relocs[key], what)
        if not record["constant"] and not array.flags.writeable:
            raise TypeError(f"{what} is written by the kernel: pass a "
                            f"writable array")
        objects[key] = array
    return objects, records


def _final(source, out):
    """The runtime's output bytes (a uint8 array it handed over) as an array
    like `source`, without copying."""
    return out.view(source.dtype).reshape(source.shape)


def _launch(compiled, kernel, grid, block, args, relocs, target, timeout,
            names, converted=None, repeat=1, times=False, shared_memory=None,
            max_tape_bytes=None):
    """Launches `kernel` of a compilation `repeat` times; `converted` holds
    the arguments already checked against the kernel's signature (else
    `args` are checked against the manifest's). Returns the outputs, and
    with `times` also their KernelTimes."""
    kernels = {k["name"]: k for k in compiled.manifest["kernels"]}
    if kernel not in kernels:
        raise ValueError(f"unknown kernel {kernel!r} (kernels: "
                         f"{', '.join(sorted(kernels))})")
    info = kernels[kernel]
    if converted is None:
        converted = _convert_args(kernel, _parameters(info, names), args,
                                  target)
    objects, records = _relocated_objects(compiled.manifest, info,
                                          dict(relocs or {}))
    packed, shapes, sources = _interleave(info, converted, objects)
    patches = {key: np.ascontiguousarray(objects[key]) for key, record in
               records.items() if key in objects and record["strategy"] == "patch"}
    launched = _nabla.launch(compiled.manifest_text, compiled.artifacts,
                             kernel, grid, block, packed, shapes, patches,
                             target, -1, timeout, repeat=repeat, timing=times,
                             shared_memory=(-1 if shared_memory is None
                                            else shared_memory),
                             max_tape_bytes=_tape_cap(max_tape_bytes))
    outputs, patched = launched[0], launched[1]
    results = []
    for param, source, out in zip(info["params"], sources, outputs):
        if ("presence_of" in param or param.get("dynamic_shared_memory_bytes")
                or param.get("tape")):
            continue
        if "reloc" in param:
            if not records[param["reloc"]]["constant"]:
                source[...] = _final(source, out)
            continue
        if isinstance(source, DeviceArray):
            results.append(source.source)  # updated in place
            continue
        if source is None and param["kind"] == "buffer":
            results.append(None)  # passed as None (an optional buffer)
            continue
        results.append(None if out is None else _final(source, out))
    for key, out in patched.items():
        if not records[key]["constant"]:
            objects[key][...] = _final(objects[key], out)
    return (results, KernelTimes(launched[2])) if times else results


def _tape_cap(max_tape_bytes):
    """The runtime's cap on a launch's global-memory tape (0: its default)."""
    if max_tape_bytes is None:
        return 0
    if (isinstance(max_tape_bytes, bool) or not isinstance(max_tape_bytes, int)
            or max_tape_bytes <= 0):
        raise ValueError(f"max_tape_bytes must be a positive number of bytes, "
                         f"got {max_tape_bytes!r}")
    return max_tape_bytes


def run(module, kernel, grid, block, args, relocs=None, target=None,
        timeout=60, repeat=1, times=False, shared_memory=None, cache=True,
        max_tape_bytes=None):
    """Compiles `module` for the device and launches `kernel` (`repeat`
    times, on the same device objects, each repeat from the same inputs).

    `args`, one per kernel parameter, typed from the kernel's signature:
    buffers as numpy arrays, buffer-protocol objects (array.array,
    bytearray, memoryview: untyped bytes are viewed as the element type) or
    objects with `__array_interface__`; scalars as Python or NumPy scalars,
    0-d arrays or (type, value). Arguments are never modified, except CUDA
    device arrays (`__cuda_array_interface__`: CuPy), which a CUDA launch
    (chosen when `target` is not given) uses in place, without host copies,
    and returns as they are. `relocs` maps
    the key of each relocation record the kernels read to its object: a
    table binding on Vulkan, a patched global on CUDA/HIP (abi v2); writable
    relocated objects are updated in place. Returns the final contents of
    the buffers as new numpy arrays (None for scalar parameters); with
    `times=True`, the pair (outputs, KernelTimes): the kernel's
    device-measured time in each repeat and the transfers' host times.
    Repeats do not change the outputs: every repeat starts from `args`.
    `shared_memory`: bytes of dynamic shared memory (`extern __shared__`,
    `gpu.dynamic_shared_memory`; CUDA's third launch parameter).
    `cache=False` compiles even when the kernel cache holds the kernel.
    `max_tape_bytes`: the most bytes a gradient kernel's global-memory tape
    may take (default 1 GiB); a launch needing more raises, naming the size.
    """
    repeat = _repeat(repeat, times)
    shared_bytes = _shared_bytes(shared_memory)
    target = _target(target, args)
    grid, block = _dim3(grid, "grid"), _dim3(block, "block")
    kernels = _described_kernels(module)
    label, kernel = kernel, _resolve_kernel(kernels, kernel) or kernel
    names = module._argument_names.get(kernel)
    # Kernels made by differentiation (nabla.kernel_adjoint) have no
    # signature before compilation: their arguments are checked after it.
    described = kernels.get(kernel)
    converted = (_convert_args(label, _parameters(described, names), args,
                               target) if described else None)
    compiled = _compile_for(module, target, block, device(target), kernel,
                            shared_memory, cache)
    return _launch(compiled, kernel, grid, block, args, relocs, target,
                   timeout, names, converted, repeat, times, shared_bytes,
                   max_tape_bytes)


class Kernel:
    """One kernel of a module, callable like a function:

        square = nabla.Kernel(module, "mul_kernel")   # or module.kernel(...)
        A2, _ = square(A, len(A), grid=1, block=64)

    Holds a snapshot of the module (later passes on `module` do not change
    it) and compiles it once per target and device (on Vulkan also per
    block size, which SPIR-V compiles in), on the first call that needs it.
    Calls take the arguments `nabla.run` takes (`repeat`, `times` too) and
    return what it returns. `name` is the kernel's name in the module or,
    for a frontend's mangled C++ names, its C++ name (`mul_kernel`); `.name`
    is then the module's."""

    def __init__(self, module, name):
        if not isinstance(module, Module):
            raise TypeError("Kernel expects a nabla.Module")
        self._module = module.clone()
        self._compiled = {}
        self._devices = {}
        self._label = name
        self.name, entry = self._describe(name)
        self._entry = entry
        self._names = module._argument_names.get(self.name)
        self.parameters = _parameters(entry, self._names)

    def _describe(self, name):
        """(the kernel's name in the module, its manifest entry): the
        signature before lowering; kernels that differentiation creates
        (nabla.kernel_adjoint) are described after it."""
        kernels = _described_kernels(self._module)
        resolved = _resolve_kernel(kernels, name)
        if resolved is None:
            differentiated = self._module.clone()
            PassManager("builtin.module(nabla-differentiate)").run(differentiated)
            kernels.update(_described_kernels(differentiated))
            resolved = _resolve_kernel(kernels, name)
        if resolved is None:
            raise ValueError(f"unknown kernel {name!r} (kernels: "
                             f"{_described_names(sorted(kernels))})")
        return resolved, kernels[resolved]

    def __repr__(self):
        return (f"<nabla.Kernel "
                f"{signature(self._label, getattr(self, 'parameters', ()))}>")

    def __call__(self, *args, grid, block, target=None, relocs=None,
                 timeout=60, repeat=1, times=False, shared_memory=None,
                 cache=True, max_tape_bytes=None):
        repeat = _repeat(repeat, times)
        shared_bytes = _shared_bytes(shared_memory)
        target = _target(target, args)
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        converted = _convert_args(self._label, self.parameters, args, target)
        if target not in self._devices:
            self._devices[target] = device(target)
        info = self._devices[target]
        key = (target, info, (tuple(block), shared_bytes)
               if target == "vulkan" else None)
        if key not in self._compiled:
            self._compiled[key] = _compile_for(self._module, target, block,
                                               info, self.name, shared_memory,
                                               cache)
        return _launch(self._compiled[key], self.name, grid, block, args,
                       relocs, target, timeout, self._names, converted,
                       repeat, times, shared_bytes, max_tape_bytes)
