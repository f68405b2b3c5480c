# ===- nabla/_compile.py - Modules compiled to target artifacts ---------=== #
#
# `nabla.compile`: the target's pipeline (nvvm, rocdl, spirv, metal) run on a
# copy of a module, giving what nabla-compile writes: the artifacts (PTX,
# HSACO, SPIR-V, MSL) and the manifest that describes each kernel's
# parameters and bindings to the runtime. Also the check of a dynamic shared
# memory size, which compilation (SPIR-V and Metal compile it in) and
# launches share.
#
# ===----------------------------------------------------------------------=== #
import json

import numpy as np

from . import _nabla
from ._ir import _translate

# Most bytes of dynamic shared memory (kMaxDynamicSharedMemory), written as
# a power of two in messages when it is one.
_MAX_SHARED_BYTES = _nabla.limits["dynamic_shared_memory"]
_MAX_SHARED_TEXT = (f"2**{_MAX_SHARED_BYTES.bit_length() - 1}"
                    if _MAX_SHARED_BYTES & (_MAX_SHARED_BYTES - 1) == 0
                    else str(_MAX_SHARED_BYTES))


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
            dynamic_shared_memory=None, cache=True, *, loop_limit=0):
    """Runs the target's pipeline on a copy of `module`. With `kernel`, only
    that kernel and what it needs are compiled (what `run` launches: errors
    elsewhere in the module do not matter). `dynamic_shared_memory`: the
    bytes of `extern __shared__` memory SPIR-V and Metal compile in.
    `cache=False` bypasses the kernel cache ($NABLA_CACHE_DIR, as
    nabla-compile's --no-cache; docs/Cache.md). `loop_limit` (SPIR-V): the
    device's loop-iteration limit, which the kernels then report reaching
    (`run` passes lavapipe's; docs/Runtime.md, *Loop limit*)."""
    if target not in ("nvvm", "rocdl", "spirv", "metal"):
        raise ValueError(f"unknown target {target!r}")
    size = [workgroup_size] if isinstance(workgroup_size, int) else list(workgroup_size)
    artifacts, manifest = _translate(
        _nabla.compile, module._native, target, chip or "", abi, size,
        subgroup_size, opt_level, kernel or "",
        _shared_bytes(dynamic_shared_memory), bool(cache), int(loop_limit))
    return CompileResult(artifacts, manifest)


def _shared_bytes(shared_memory):
    """-1 (not given) or the bytes of dynamic shared memory, checked."""
    if shared_memory is None:
        return -1
    if (isinstance(shared_memory, bool) or
            not isinstance(shared_memory, (int, np.integer))):
        raise TypeError(f"shared_memory must be an int, got "
                        f"{type(shared_memory).__name__}")
    if not 0 <= shared_memory <= _MAX_SHARED_BYTES:
        raise ValueError(f"shared_memory must be 0 to {_MAX_SHARED_TEXT} "
                         f"bytes, got {shared_memory}")
    return int(shared_memory)
