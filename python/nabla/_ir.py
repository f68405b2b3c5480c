# ===- nabla/_ir.py - Modules, pass pipelines and MLIR errors -----------=== #
#
# The IR side of `nabla`: a context with every dialect (one default context,
# made on first use), modules parsed from MLIR text or a frontend's LLVM IR,
# pass pipelines run on them, the registry of passes, and MLIR diagnostics
# raised as `MLIRError`. Parsing keeps the names of every kernel's
# arguments -- the SSA names or name locations of MLIR text, the parameter
# names of LLVM IR -- which the argument checks of `run` quote in their
# messages.
#
# ===----------------------------------------------------------------------=== #
from . import _nabla
from ._arguments import argument_names, merge_names


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
        # {kernel: names of its arguments in the source}: the module does
        # not keep them, error messages use them.
        self._argument_names = dict(names or {})

    @staticmethod
    def parse(text, context=None):
        if not isinstance(text, str):
            raise TypeError("Module.parse expects MLIR text (str)")
        native = _translate(_nabla.Module.parse, _context(context)._native,
                            text)
        names = argument_names(text)
        for kernel, located in _nabla.location_names(native).items():
            names[kernel] = merge_names(names.get(kernel), located)
        return Module(native, names)

    @staticmethod
    def parse_llvm_ir(source, context=None, module_name="kernels"):
        """A frontend's LLVM IR -- `.ll` text (str) or bitcode (bytes) --
        imported and raised by --nabla-raise-llvm (clang CUDA/HIP,
        Julia-style IR; Enzyme's __enzyme_autodiff/__enzyme_fwddiff requests
        become nabla.autodiff/fwddiff). Kernels keep their LLVM names (a
        `Kernel` also takes the C++ name); a byval or aggregate parameter is
        passed as its fields in order. Parameter names are the IR's (`a.0`,
        `a.1` for the fields of `a`)."""
        return _parse_llvm_ir(source, context, module_name)[0]

    def clone(self):
        return Module(self._native.clone(), self._argument_names)

    def kernel(self, name):
        """A callable `Kernel` for kernel `name` of (a snapshot of) this
        module."""
        # Imported here: _run builds on Module (a Kernel holds a clone).
        from ._run import Kernel
        return Kernel(self, name)

    def __str__(self):
        return str(self._native)


def _parse_llvm_ir(source, context=None, module_name="kernels", kernel=""):
    """(Module, the kernel's IR name): LLVM IR raised as parse_llvm_ir does;
    with `kernel` (its IR or C++ name) only that kernel and what it reaches,
    so that errors elsewhere do not matter."""
    if isinstance(source, str):
        data = source.encode()
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        raise TypeError("Module.parse_llvm_ir expects .ll text (str) or "
                        "bitcode (bytes)")
    native, names, resolved = _translate(
        _nabla.Module.parse_llvm_ir, _context(context)._native, data,
        module_name, kernel)
    names = {function: [name or None for name in listed]
             for function, listed in names.items()}
    return Module(native, names), resolved


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
