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
#                     args=[np.arange(8, dtype=np.float32), ("index", 8)])
#
# ===----------------------------------------------------------------------=== #
import json
import os

import numpy as np

from . import _nabla

__all__ = ["Context", "Module", "MLIRError", "PassManager", "passes",
           "compile", "CompileResult", "run", "check_gradient", "device"]


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

    def __init__(self, native):
        self._native = native

    @staticmethod
    def parse(text, context=None):
        if not isinstance(text, str):
            raise TypeError("Module.parse expects MLIR text (str)")
        return Module(_translate(_nabla.Module.parse, _context(context)._native,
                                 text))

    def clone(self):
        return Module(self._native.clone())

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
            subgroup_size=32, opt_level=2):
    """Runs the target's pipeline on a copy of `module`."""
    if target not in ("nvvm", "rocdl", "spirv", "metal"):
        raise ValueError(f"unknown target {target!r}")
    size = [workgroup_size] if isinstance(workgroup_size, int) else list(workgroup_size)
    artifacts, manifest = _translate(_nabla.compile, module._native, target,
                                     chip or "", abi, size, subgroup_size,
                                     opt_level)
    return CompileResult(artifacts, manifest)


def device(target=None, index=-1):
    """(name, chip, subgroup size) of the device a run would use."""
    return _nabla.device_info(target or os.environ.get("NABLA_TARGET", "vulkan"),
                              index)


_DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32,
           "i64": np.int64, "index": np.int64}


def _dim3(value, what):
    dims = [value] if isinstance(value, int) else list(value)
    if not 1 <= len(dims) <= 3 or any(not isinstance(d, (int, np.integer)) or d < 1
                                      for d in dims):
        raise ValueError(f"{what} must be 1 to 3 positive integers, got {value!r}")
    return [int(d) for d in dims]


def _pack_buffer(param, arg, what):
    if not isinstance(arg, np.ndarray):
        raise TypeError(f"{what} ({param['type']}) needs a numpy array, got "
                        f"{type(arg).__name__}")
    dtype = _DTYPES.get(param["element"])
    if dtype is None or arg.dtype != dtype:
        raise TypeError(f"{what} ({param['type']}) needs dtype "
                        f"{np.dtype(dtype).name if dtype else param['element']}, "
                        f"got {arg.dtype}")
    if arg.ndim != len(param["shape"]) or any(
            e is not None and e != s for e, s in zip(param["shape"], arg.shape)):
        raise ValueError(f"{what} ({param['type']}) does not accept shape "
                         f"{arg.shape}")
    return np.ascontiguousarray(arg).tobytes(), list(arg.shape)


def _pack_args(kernel, args, relocs):
    """Packs the kernel's own parameters from `args` and the parameters the
    table strategy added from `relocs`; returns (packed, shapes, sources),
    sources[k] being the array parameter k came from (None for scalars)."""
    params = kernel["params"]
    own = [p for p in params if "reloc" not in p]
    if len(args) != len(own):
        raise ValueError(f"kernel {kernel['name']!r} takes {len(own)} "
                         f"arguments, got {len(args)}")
    packed, shapes, sources = [], [], []
    remaining = iter(args)
    for param in params:
        k = param["index"]
        if "reloc" in param:
            key = param["reloc"]
            if key not in relocs:
                raise ValueError(f"kernel {kernel['name']!r} reads the "
                                 f"relocated object {key!r}: pass it in relocs")
            arg = relocs[key]
            data, shape = _pack_buffer(param, arg, f"relocation record {key!r}")
        elif param["kind"] == "buffer":
            arg = next(remaining)
            data, shape = _pack_buffer(param, arg, f"parameter #{k}")
        else:
            arg = next(remaining)
            if isinstance(arg, np.ndarray) or not (
                    isinstance(arg, tuple) and len(arg) == 2):
                raise TypeError(f"parameter #{k} is a scalar {param['type']}: "
                                f"pass ({param['type']!r}, value)")
            type_name, value = arg
            if type_name != param["type"]:
                raise TypeError(f"parameter #{k} is {param['type']}, got "
                                f"{type_name!r}")
            data, shape = np.array(value, dtype=_DTYPES[type_name]).tobytes(), []
            arg = None
        packed.append(data)
        shapes.append(shape)
        sources.append(arg)
    return packed, shapes, sources


def _pack_patches(manifest, kernel, relocs):
    """The objects of the patch records of the kernel's module, by key."""
    patches = {}
    for record in manifest.get("relocations", []):
        if record["module"] != kernel["module"] or record["strategy"] != "patch":
            continue
        key = record["key"]
        if key not in relocs:
            raise ValueError(f"module {kernel['module']!r} reads the relocated "
                             f"object {key!r}: pass it in relocs")
        if record["pointer"]:
            patches[key] = np.ascontiguousarray(relocs[key]).tobytes()
        else:
            patches[key], _ = _pack_buffer(record, relocs[key],
                                           f"relocation record {key!r}")
    return patches


def run(module, kernel, grid, block, args, relocs=None, target=None,
        timeout=60):
    """Compiles `module` for the device and launches `kernel` once.
    `args`: numpy arrays for buffers, (type, value) for scalars. `relocs`
    maps the key of each relocation record the kernels read to its object (a
    numpy array): a table binding on Vulkan, a patched global on CUDA/HIP
    (abi v2). Returns the final arrays (None for scalar parameters); writable
    relocated objects are updated in place in `relocs`."""
    relocs = dict(relocs or {})
    target = target or os.environ.get("NABLA_TARGET", "vulkan")
    grid, block = _dim3(grid, "grid"), _dim3(block, "block")
    name, chip, subgroup = device(target)
    if target == "vulkan":
        compiled = compile(module, "spirv", workgroup_size=block,
                           subgroup_size=subgroup)
    else:
        compiled = compile(module, "nvvm" if target == "cuda" else "rocdl",
                           chip=chip)
    kernels = {k["name"]: k for k in compiled.manifest["kernels"]}
    if kernel not in kernels:
        raise ValueError(f"unknown kernel {kernel!r} (kernels: "
                         f"{', '.join(sorted(kernels))})")
    records = {r["key"]: r for r in compiled.manifest.get("relocations", [])}
    for key in relocs:
        if key not in records:
            raise ValueError(f"relocs names {key!r}, which is not a "
                             f"relocation record of these kernels")
    info = kernels[kernel]
    packed, shapes, sources = _pack_args(info, args, relocs)
    patches = _pack_patches(compiled.manifest, info, relocs)
    outputs, patched = _nabla.launch(compiled.manifest_text,
                                     compiled.artifacts, kernel, grid, block,
                                     packed, shapes, patches, target, -1,
                                     timeout)

    def final(source, out):
        return np.frombuffer(out, dtype=source.dtype).reshape(source.shape).copy()

    results = []
    for param, source, out in zip(info["params"], sources, outputs):
        if "reloc" in param:
            if not records[param["reloc"]]["constant"]:
                source[...] = final(source, out)
            continue
        results.append(None if out is None else final(source, out))
    for key, out in patched.items():
        if not records[key]["constant"]:
            relocs[key][...] = final(relocs[key], out)
    return results


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
    dup = list(dup)
    for k in dup:
        if not isinstance(args[k], np.ndarray):
            raise TypeError(f"dup parameter #{k} must be a numpy array")
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
