# ===- nabla/cuda.py - CUDA and HIP source in, kernels out --------------=== #
#
# `nabla.cuda.Kernel(source, name)`: CuPy's RawKernel habit for Nabla. clang-22
# compiles the source for the device (the command line `nabla-run FILE.cu`
# uses, nabla/Frontend/GPUSource.h: line tables, so that every diagnostic
# names the source's line; Nabla's enzyme.h on the include path), the LLVM IR
# is raised like any frontend's (`Module.parse_llvm_ir`), and the result is
# a `nabla.Kernel`: launched with numpy arrays, differentiated through
# Enzyme's __enzyme_autodiff / __enzyme_fwddiff requests in the source.
#
#     square = nabla.cuda.Kernel(SOURCE, "grad_mul_kernel")
#     A2, dA, _ = square(A, np.ones_like(A), len(A), grid=4, block=64)
#
# ===----------------------------------------------------------------------=== #
import os as _os
import warnings as _warnings

from . import _nabla
from ._ir import _parse_llvm_ir
from ._run import Kernel as _Kernel

__all__ = ["Kernel", "module", "llvm_ir", "CompileError", "CompileWarning"]

# The package's folder: share/nabla/include (enzyme.h) is looked for from
# here upwards, in the build tree and in an installation alike.
_PACKAGE_DIR = _os.path.dirname(_os.path.abspath(__file__))


class CompileError(Exception):
    """clang rejected the source. The message and `log` are clang's
    diagnostics, `kernel.cu:LINE:COL: error: ...` (the file as named by
    `filename`)."""

    def __init__(self, log):
        super().__init__(log.rstrip())
        self.log = log


class CompileWarning(UserWarning):
    """clang compiled the source with warnings (`Kernel.log` keeps them)."""


def _source(source, options, language, filename):
    """(text, file name, options): a str is the source itself; a path
    (os.PathLike) is read, keeps its name, and its folder is searched for
    its own headers."""
    if isinstance(options, str):
        options = (options,)
    options = list(options)
    if not all(isinstance(o, str) for o in options):
        raise TypeError(f"options must be clang arguments (str), got "
                        f"{options!r}")
    if language not in ("cuda", "hip"):
        raise ValueError(f"unknown language {language!r} (cuda or hip)")
    if isinstance(source, _os.PathLike):
        path = _os.fspath(source)
        with open(path) as file:
            text = file.read()
        options = ["-I", _os.path.dirname(_os.path.abspath(path))] + options
        return text, filename or path, options
    if not isinstance(source, str):
        raise TypeError(f"source must be CUDA/HIP source text (str) or a "
                        f"path, got {type(source).__name__}")
    default = "kernel.cu" if language == "cuda" else "kernel.hip"
    return source, filename or default, options


def _compile(source, options, language, arch, filename):
    """(LLVM IR text, clang's warnings)."""
    text, filename, options = _source(source, options, language, filename)
    try:
        ir, log = _nabla.compile_gpu_source(text, filename, language,
                                            arch or "", options, _PACKAGE_DIR)
    except _nabla._ClangError as error:
        raise CompileError(str(error)) from None
    if log:
        _warnings.warn(CompileWarning(log.rstrip()), stacklevel=3)
    return ir, log


def llvm_ir(source, options=(), *, language="cuda", arch=None, filename=None):
    """The device LLVM IR clang-22 makes of `source` (text, or a path), as
    `Kernel` compiles it: `-O2 -gline-tables-only -fno-discard-value-names`,
    CUDA for `sm_80` (HIP: `gfx90a`, without ROCm `-nogpuinc`) unless `arch`
    says otherwise; `options` come after Nabla's flags (`-O1`, `-DN=4`,
    `-I dir`)."""
    return _compile(source, options, language, arch, filename)[0]


def module(source, options=(), *, language="cuda", arch=None, filename=None,
           context=None):
    """Every kernel of `source`, raised into a `nabla.Module` (compiled
    once): `module(src).kernel("mul_kernel")`. Kernels keep their LLVM
    (mangled) names; `Kernel` and `run` also take the C++ names."""
    ir, _ = _compile(source, options, language, arch, filename)
    return _parse_llvm_ir(ir, context)[0]


class Kernel(_Kernel):
    """Kernel `name` of CUDA (or HIP) source, callable like any
    `nabla.Kernel`:

        k = nabla.cuda.Kernel(SOURCE, "mul_kernel", options=("-O1",))
        A2, _ = k(A, len(A), grid=4, block=64)

    `name` is the kernel's C++ name (or its mangled one; a signature such as
    "scale(float*, int)" picks among overloads). Only that kernel and what
    it reaches are raised. clang's errors raise `CompileError`, with its
    `file:LINE:COL` diagnostics; errors of the raise or of the AD raise
    `nabla.MLIRError` located at the source's lines. `log`: clang's
    warnings; `llvm_ir`: the IR it made; `module`: the raised module."""

    def __init__(self, source, name, options=(), *, language="cuda",
                 arch=None, filename=None, context=None):
        if not isinstance(name, str):
            raise TypeError(f"the kernel name is a str, got "
                            f"{type(name).__name__}")
        self.llvm_ir, self.log = _compile(source, options, language, arch,
                                          filename)
        self.module, resolved = _parse_llvm_ir(self.llvm_ir, context,
                                               kernel=name)
        super().__init__(self.module, resolved)
        self._label = name

    def __repr__(self):
        return "<nabla.cuda." + super().__repr__()[len("<nabla."):]
