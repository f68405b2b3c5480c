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
# Arguments are typed from the kernel's signature (_arguments.py). The
# package is split by concern; this file only gathers the public API:
#
#     _ir.py         Context, Module, PassManager, passes, MLIRError
#     _compile.py    compile, CompileResult
#     _run.py        run, Kernel, device: arguments, compilation, launches
#     _timing.py     KernelTimes (run(..., times=True))
#     _gradcheck.py  check_gradient, GradientReport
#     _adjoint.py    kernel adjoints generated for check_gradient and torch
#     torch.py       nabla.torch.function: kernels in PyTorch's autograd
#     _arguments.py  Python values as kernel parameters
#     _host.py       run_host: whole host programs through nabla-run
#     _host_grad.py  grad_host, check_gradient_host: host-level AD
#     cuda.py        nabla.cuda: CUDA/HIP source in, Kernel out (clang-22)
#
# The limits checked before a launch come from the native module
# (`_nabla.limits`, nabla/Support/Limits.h), as does `__version__` (the
# version the tools print).
#
# `nabla.torch` (kernels as torch.autograd.Functions) is imported on first
# use, so `import nabla` works without PyTorch.
#
# ===----------------------------------------------------------------------=== #
import importlib as _importlib

from . import _nabla
from ._host import HostProgramError, HostResult, run_host, run_host_batch
from ._host_grad import (HostGradient, check_gradient_host, grad_host,
                         jvp_host)
from ._arguments import Parameter
from ._ir import Context, MLIRError, Module, PassManager, passes
from ._compile import CompileResult, compile
from ._timing import KernelTimes
from ._run import Kernel, device, run
# Not public: bench/ packs arguments and launches compiled kernels itself.
from ._run import _launch, _pack_args
from ._gradcheck import GradientReport, check_gradient
from . import cuda

__version__ = _nabla.version

__all__ = ["Context", "Module", "MLIRError", "PassManager", "passes",
           "compile", "CompileResult", "run", "check_gradient", "device",
           "Kernel", "Parameter", "KernelTimes", "run_host", "HostResult",
           "run_host_batch", "grad_host", "jvp_host", "check_gradient_host",
           "HostGradient",
           "HostProgramError", "GradientReport", "cuda", "__version__"]

# What __init__.py defined before the split keeps `nabla` as its module:
# tracebacks still print nabla.MLIRError, reprs <class 'nabla.Module'>, and
# pickles find the classes where they did.
for _public in (Context, Module, MLIRError, PassManager, passes, compile,
                CompileResult, run, check_gradient, device, Kernel,
                KernelTimes, GradientReport):
    _public.__module__ = __name__
del _public


def __getattr__(name):
    """`nabla.torch` on first use (PyTorch is optional)."""
    if name == "torch":
        return _importlib.import_module(".torch", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
