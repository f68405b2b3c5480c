# ===- nabla/_ir.py - Modules, pass pipelines and MLIR errors -----------=== #
#
# The IR side of `nabla`: a context with every dialect (one default context,
# made on first use), modules parsed from MLIR text or a frontend's LLVM IR,
# pass pipelines run on them, the registry of passes, and MLIR diagnostics
# raised as `MLIRError`. Parsing keeps the SSA names of every kernel's
# arguments, which the argument checks of `run` quote in their messages.
#
# ===----------------------------------------------------------------------=== #
from . import _nabla
from ._arguments import argument_names


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
        # Imported here: _run builds on Module (a Kernel holds a clone).
        from ._run import Kernel
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
