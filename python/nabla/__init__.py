# ===- nabla/__init__.py - Python interface to Nabla -------------------=== #
#
# `import nabla`: parse and print modules, run any registered pass or
# pipeline, compile for nvvm/rocdl/spirv/metal, run kernels with numpy
# arrays on Vulkan (lavapipe without a GPU), CUDA or HIP, and check a
# gradient kernel against finite differences.
#
#     m = nabla.Module.parse(open("examples/mul_kernel.mlir").read())
#     nabla.PassManager("builtin.module(nabla-differentiate)").run(m)
#     out = nabla.run(m, "mul_kernel", grid=1, block=64,
#                     args=[np.arange(8, dtype=np.float32), 8])
#     square = m.kernel("mul_kernel")       # compiled once per target
#     out = square(np.arange(8, dtype=np.float32), 8, grid=1, block=64)
#     out, times = nabla.run(m, "mul_kernel", 1, 64, args, repeat=5,
#                            times=True)     # times.median_ns: device clock
#
# Arguments are typed from the kernel's signature (_arguments.py).
#
# ===----------------------------------------------------------------------=== #
import json
import os
import statistics

import numpy as np

from . import _nabla
from ._host import HostProgramError, HostResult, run_host
from ._arguments import (VULKAN_INDEX_MAX, DeviceArray, Parameter,
                         argument_names, as_array, as_buffer,
                         as_device_buffer, device_array_error,
                         is_device_array, pack_scalar,
                         parameters as _parameters)

__all__ = ["Context", "Module", "MLIRError", "PassManager", "passes",
           "compile", "CompileResult", "run", "check_gradient", "device",
           "Kernel", "Parameter", "KernelTimes", "run_host", "HostResult",
           "HostProgramError"]


class MLIRError(Exception):
    """A failure reported by MLIR; `diagnostics` lists (severity, location,
    message) for every diagnostic, in order."""

    def __init__(self, message, diagnostics):
        self.diagnostics = [tuple(d) for d in diagnostics]
        details = "".join(f"\n  {loc}: {sev}: {msg}"
                          for sev, loc, msg in self.diagnostics)
        super().__init__(message + details)


def _translate(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except _nabla._DiagnosticsError as error:
        message, diagnostics = error.args[0] if len(error.args) == 1 else error.args
        raise MLIRError(message, diagnostics) from None


class Context:
    """Every upstream and Nabla dialect, loaded on demand."""

    def __init__(self):
        self._native = _nabla.Context()


_default_context = None


def _context(context):
    global _default_context
    if context is not None:
        return context
    if _default_context is None:
        _default_context = Context()
    return _default_context


class Module:
    """An MLIR module."""

    def __init__(self, native, names=None):
        self._native = native
        # {kernel: SSA names of its arguments in the parsed text}: parsing
        # drops them, error messages use them.
        self._argument_names = dict(names or {})

    @staticmethod
    def parse(text, context=None):
        if not isinstance(text, str):
            raise TypeError("Module.parse expects MLIR text (str)")
        return Module(_translate(_nabla.Module.parse, _context(context)._native,
                                 text), argument_names(text))

    @staticmethod
    def parse_llvm_ir(source, context=None, module_name="kernels"):
        """A frontend's LLVM IR -- `.ll` text (str) or bitcode (bytes) --
        imported and raised by --nabla-raise-llvm (clang CUDA/HIP,
        Julia-style IR; Enzyme's __enzyme_autodiff/__enzyme_fwddiff requests
        become nabla.autodiff/fwddiff). Kernels keep their LLVM names; a
        byval or aggregate parameter is passed as its fields in order."""
        if isinstance(source, str):
            data = source.encode()
        elif isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        else:
            raise TypeError("Module.parse_llvm_ir expects .ll text (str) or "
                            "bitcode (bytes)")
        return Module(_translate(_nabla.Module.parse_llvm_ir,
                                 _context(context)._native, data,
                                 module_name))

    def clone(self):
        return Module(self._native.clone(), self._argument_names)

    def kernel(self, name):
        """A callable `Kernel` for kernel `name` of (a snapshot of) this
        module."""
        return Kernel(self, name)

    def __str__(self):
        return str(self._native)


class PassManager:
    """A pass pipeline in textual form, e.g.
    "builtin.module(nabla-differentiate, canonicalize)"."""

    def __init__(self, pipeline):
        if not isinstance(pipeline, str):
            raise TypeError("PassManager expects a pipeline string")
        self.pipeline = pipeline

    def run(self, module):
        _translate(module._native.run_pipeline, self.pipeline)
        return module


def passes():
    """Every registered pass and pipeline: [{name, description, options}]."""
    entries, current = [], None
    for line in _nabla.registered_passes().splitlines():
        stripped = line.strip()
        if not stripped.startswith("--"):
            continue
        indent = len(line) - len(line.lstrip())
        name, _, description = stripped[2:].partition(" ")
        if indent > 2 and current is not None:
            current["options"].append(name.split("=")[0])
            continue
        current = {"name": name, "description": description.strip(" -"),
                   "options": []}
        entries.append(current)
    return entries


class CompileResult:
    """`artifacts`: {file name: bytes}; `manifest`: the parsed manifest."""

    def __init__(self, artifacts, manifest_text):
        self.artifacts = dict(artifacts)
        self.manifest_text = manifest_text
        self.manifest = json.loads(manifest_text)

    def __getitem__(self, name):
        return self.artifacts[name]


def compile(module, target="spirv", chip="", abi="v2", workgroup_size=(),
            subgroup_size=32, opt_level=2, kernel=None,
            dynamic_shared_memory=None):
    """Runs the target's pipeline on a copy of `module`. With `kernel`, only
    that kernel and what it needs are compiled (what `run` launches: errors
    elsewhere in the module do not matter). `dynamic_shared_memory`: the
    bytes of `extern __shared__` memory SPIR-V and Metal compile in."""
    if target not in ("nvvm", "rocdl", "spirv", "metal"):
        raise ValueError(f"unknown target {target!r}")
    size = [workgroup_size] if isinstance(workgroup_size, int) else list(workgroup_size)
    artifacts, manifest = _translate(
        _nabla.compile, module._native, target, chip or "", abi, size,
        subgroup_size, opt_level, kernel or "",
        _shared_bytes(dynamic_shared_memory))
    return CompileResult(artifacts, manifest)


def device(target=None, index=-1):
    """(name, chip, subgroup size) of the device a run would use."""
    return _nabla.device_info(target or os.environ.get("NABLA_TARGET", "vulkan"),
                              index)


# The tools' limits (nabla/Support/Limits.h): no target runs more than 1024
# threads in a workgroup dimension; CUDA's largest grid dimension.
_MAX_EXTENT = {"block": 1024, "grid": 2**31 - 1}


# Most repeats of one launch (kMaxLaunchRepeat).
_MAX_REPEAT = 100000


class KernelTimes:
    """The times of one launch repeated `repeat` times, in nanoseconds.

    `kernel_ns`: the kernel's time in each repeat, from the device's clock
    around the dispatch only (Vulkan timestamp queries, CUDA/HIP events);
    `min_ns`, `median_ns`, `max_ns` summarize it. Transfers are apart, host
    wall time: `upload_ns` (writing every input before each repeat),
    `download_ns` (reading the buffers back after the last), and
    `launch_wall_ns` the whole launch (device objects, pipeline or module,
    uploads, repeats, read-back). `backend` and `device` name the device."""

    def __init__(self, measured):
        self.kernel_ns = [float(t) for t in measured["kernel_ns"]]
        self.upload_ns = [float(t) for t in measured["upload_ns"]]
        self.download_ns = float(measured["download_ns"])
        self.launch_wall_ns = float(measured["launch_wall_ns"])
        self.backend = measured["backend"]
        self.device = measured["device"]

    @property
    def repeat(self):
        return len(self.kernel_ns)

    @property
    def min_ns(self):
        return min(self.kernel_ns)

    @property
    def median_ns(self):
        return statistics.median(self.kernel_ns)

    @property
    def max_ns(self):
        return max(self.kernel_ns)

    def __repr__(self):
        return (f"<nabla.KernelTimes {self.repeat} x on {self.backend}: "
                f"kernel min {self.min_ns / 1e3:.3g} us, median "
                f"{self.median_ns / 1e3:.3g} us, max {self.max_ns / 1e3:.3g} us>")


def _repeat(repeat, times):
    if (isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer))
            or not 1 <= repeat <= _MAX_REPEAT):
        raise ValueError(f"repeat must be an integer from 1 to {_MAX_REPEAT}, "
                         f"got {repeat!r}")
    if not isinstance(times, bool):
        raise TypeError(f"times must be True or False, got {times!r}")
    return int(repeat)


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


def _convert_args(kernel, params, args, target):
    """Checks and converts the caller's arguments against the kernel's
    parameters (before anything is compiled or launched): numpy arrays for
    buffers, little-endian bytes for scalars."""
    args = list(args)
    if len(args) != len(params):
        raise ValueError(f"kernel {kernel!r} takes {len(params)} arguments, "
                         f"got {len(args)}")
    index_max = VULKAN_INDEX_MAX if target == "vulkan" else 2 ** 63 - 1
    converted = []
    for param, arg in zip(params, args):
        what = param.label(kernel)
        if param.kind != "buffer":
            converted.append(pack_scalar(param, arg, what, index_max))
        elif not is_device_array(arg):
            converted.append(as_buffer(param, arg, what))
        elif target != "cuda":
            raise device_array_error(what, arg, target)
        else:
            converted.append(as_device_buffer(param, arg, what))
    return converted


def _shared_bytes(shared_memory):
    """-1 (not given) or the bytes of dynamic shared memory, checked."""
    if shared_memory is None:
        return -1
    if (isinstance(shared_memory, bool) or
            not isinstance(shared_memory, (int, np.integer))):
        raise TypeError(f"shared_memory must be an int, got "
                        f"{type(shared_memory).__name__}")
    if not 0 <= shared_memory <= 2 ** 31:
        raise ValueError(f"shared_memory must be 0 to 2**31 bytes, got "
                         f"{shared_memory}")
    return int(shared_memory)


def _compile_for(module, target, block, device_info, kernel,
                 shared_memory=None):
    """The compilation `run` launches on `target`'s device: SPIR-V with the
    workgroup size (and dynamic shared memory) compiled in, or PTX/HSACO for
    the device's chip; only `kernel` and what it needs."""
    _, chip, subgroup = device_info
    if target == "vulkan":
        return compile(module, "spirv", workgroup_size=block,
                       subgroup_size=subgroup, kernel=kernel,
                       dynamic_shared_memory=shared_memory)
    return compile(module, "nvvm" if target == "cuda" else "rocdl", chip=chip,
                   kernel=kernel)


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
    for param in kernel["params"]:
        value = relocs[param["reloc"]] if "reloc" in param else next(remaining)
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
        shapes.append(list(value.shape))
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
            names, converted=None, repeat=1, times=False, shared_memory=None):
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
                                            else shared_memory))
    outputs, patched = launched[0], launched[1]
    results = []
    for param, source, out in zip(info["params"], sources, outputs):
        if "reloc" in param:
            if not records[param["reloc"]]["constant"]:
                source[...] = _final(source, out)
            continue
        if isinstance(source, DeviceArray):
            results.append(source.source)  # updated in place
            continue
        results.append(None if out is None else _final(source, out))
    for key, out in patched.items():
        if not records[key]["constant"]:
            objects[key][...] = _final(objects[key], out)
    return (results, KernelTimes(launched[2])) if times else results


def run(module, kernel, grid, block, args, relocs=None, target=None,
        timeout=60, repeat=1, times=False, shared_memory=None):
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
    `gpu.dynamic_shared_memory`; CUDA's third launch parameter)."""
    repeat = _repeat(repeat, times)
    shared_bytes = _shared_bytes(shared_memory)
    target = _target(target, args)
    grid, block = _dim3(grid, "grid"), _dim3(block, "block")
    names = module._argument_names.get(kernel)
    # Kernels made by differentiation (nabla.kernel_adjoint) have no
    # signature before compilation: their arguments are checked after it.
    described = _described_kernels(module).get(kernel)
    converted = (_convert_args(kernel, _parameters(described, names), args,
                               target) if described else None)
    compiled = _compile_for(module, target, block, device(target), kernel,
                            shared_memory)
    return _launch(compiled, kernel, grid, block, args, relocs, target,
                   timeout, names, converted, repeat, times, shared_bytes)


class Kernel:
    """One kernel of a module, callable like a function:

        square = nabla.Kernel(module, "mul_kernel")   # or module.kernel(...)
        A2, _ = square(A, len(A), grid=1, block=64)

    Holds a snapshot of the module (later passes on `module` do not change
    it) and compiles it once per target and device (on Vulkan also per
    block size, which SPIR-V compiles in), on the first call that needs it.
    Calls take the arguments `nabla.run` takes (`repeat`, `times` too) and
    return what it returns."""

    def __init__(self, module, name):
        if not isinstance(module, Module):
            raise TypeError("Kernel expects a nabla.Module")
        self.name = name
        self._module = module.clone()
        self._names = module._argument_names.get(name)
        self._compiled = {}
        self._devices = {}
        self.parameters = self._describe()

    def _describe(self):
        """The signature before lowering; kernels that differentiation
        creates (nabla.kernel_adjoint) are described after it."""
        kernels = _described_kernels(self._module)
        if self.name not in kernels:
            differentiated = self._module.clone()
            PassManager("builtin.module(nabla-differentiate)").run(differentiated)
            kernels.update(_described_kernels(differentiated))
        if self.name not in kernels:
            raise ValueError(f"unknown kernel {self.name!r} (kernels: "
                             f"{', '.join(sorted(kernels))})")
        return _parameters(kernels[self.name], self._names)

    def __repr__(self):
        signature = ", ".join(f"{p.name or '#' + str(p.position)}: {p.type}"
                              for p in self.parameters)
        return f"<nabla.Kernel {self.name}({signature})>"

    def __call__(self, *args, grid, block, target=None, relocs=None,
                 timeout=60, repeat=1, times=False, shared_memory=None):
        repeat = _repeat(repeat, times)
        shared_bytes = _shared_bytes(shared_memory)
        target = _target(target, args)
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        converted = _convert_args(self.name, self.parameters, args, target)
        if target not in self._devices:
            self._devices[target] = device(target)
        info = self._devices[target]
        key = (target, info, (tuple(block), shared_bytes)
               if target == "vulkan" else None)
        if key not in self._compiled:
            self._compiled[key] = _compile_for(self._module, target, block,
                                               info, self.name, shared_memory)
        return _launch(self._compiled[key], self.name, grid, block, args,
                       relocs, target, timeout, self._names, converted,
                       repeat, times, shared_bytes)


def check_gradient(module, kernel, grad_kernel, grid, block, args, dup,
                   tangent_kernel=None, eps=1e-6, rtol=1e-5, atol=1e-8, seed=0):
    """Checks a gradient kernel the way Nabla's own tests do.

    `grad_kernel` is the reverse mode of `kernel` and `tangent_kernel` (if
    given) its forward mode, both with a shadow right after every parameter
    index listed in `dup` (Enzyme's semantics: reverse shadows hold the
    cotangent w of the final state on entry and J^T w on exit; forward shadows
    hold the tangent v on entry and J v on exit). Checks <v, J^T w> against
    central finite differences of <M(x), w>, M mapping the dup buffers'
    initial to final state, and, with `tangent_kernel`, the dot-product test
    <J v, w> = <v, J^T w>. Returns a report dict whose `ok` says whether
    every check passed."""
    rng = np.random.default_rng(seed)
    dup, args = list(dup), list(args)
    for k in dup:
        args[k] = as_array(args[k], f"dup parameter #{k}")
    v = {k: rng.standard_normal(args[k].shape) for k in dup}
    w = {k: rng.standard_normal(args[k].shape) for k in dup}

    def dot(a, b):
        return sum(np.dot(np.asarray(a[k], np.float64).ravel(),
                          np.asarray(b[k], np.float64).ravel()) for k in dup)

    def perturbed(sign):
        shifted = list(args)
        for k in dup:
            shifted[k] = (args[k] + sign * eps * v[k]).astype(args[k].dtype)
        return run(module, kernel, grid, block, shifted)

    def with_shadows(shadows):
        extended, position = [], {}
        for k, a in enumerate(args):
            extended.append(a.copy() if isinstance(a, np.ndarray) else a)
            if k in dup:
                position[k] = len(extended)
                extended.append(shadows[k].astype(args[k].dtype))
        return extended, position

    plus, minus = perturbed(1), perturbed(-1)
    fd = dot({k: plus[k].astype(np.float64) - minus[k] for k in dup}, w) / (2 * eps)
    grad_args, position = with_shadows(w)
    grads = run(module, grad_kernel, grid, block, grad_args)
    jtw = {k: grads[position[k]] for k in dup}
    reverse = dot(v, jtw)
    report = {"reverse": float(reverse), "finite_differences": float(fd),
              "ok": bool(np.isclose(reverse, fd, rtol=rtol, atol=atol))}
    if tangent_kernel is not None:
        tangent_args, position = with_shadows(v)
        tangents = run(module, tangent_kernel, grid, block, tangent_args)
        forward = dot({k: tangents[position[k]] for k in dup}, w)
        report["forward"] = float(forward)
        report["ok"] &= bool(np.isclose(forward, reverse, rtol=rtol, atol=atol))
    return report
