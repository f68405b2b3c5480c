# ===- test_kernel_cache.py - The kernel cache from Python ---------------=== #
#
# nabla.compile, nabla.run and nabla.Kernel (so also nabla.cuda.Kernel) go
# through the kernel cache that nabla-compile uses (docs/Cache.md): a second
# compilation of the same module with the same options is a hit with the
# same artifacts, `cache=False` bypasses it, and a malformed
# NABLA_CACHE_SIZE is a ValueError. The cache is off for every other test
# (conftest.py); each test here gets its own directory. Hits are counted by
# the extension's process-wide statistics.
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os

import numpy as np
import pytest

import nabla
from nabla import _nabla

KERNEL = """module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%A: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %inbounds = arith.cmpi ult, %i, %n : index
      scf.if %inbounds {
        %a = memref.load %A[%i] : memref<?xf32>
        %b = arith.addf %a, %a : f32
        memref.store %b, %A[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.delenv("NABLA_NO_CACHE", raising=False)
    monkeypatch.delenv("NABLA_CACHE_SIZE", raising=False)
    monkeypatch.setenv("NABLA_CACHE_DIR", str(directory))
    return directory


def counts_after(action):
    """What `action()` did to the cache: (hits, misses, stores)."""
    before = _nabla.cache_statistics()
    action()
    after = _nabla.cache_statistics()
    return tuple(after[k] - before[k] for k in ("hits", "misses", "stores"))


def test_compile_hits_the_cache(cache):
    module = nabla.Module.parse(KERNEL)
    results = []
    compile_ = lambda **kw: results.append(
        nabla.compile(module, "spirv", workgroup_size=64, **kw))
    assert counts_after(compile_) == (0, 1, 1)
    assert counts_after(compile_) == (1, 0, 0)
    assert results[0].artifacts == results[1].artifacts
    assert results[0].manifest == results[1].manifest
    # Another option, another entry; cache=False neither reads nor writes.
    assert counts_after(lambda: compile_(opt_level=1)) == (0, 1, 1)
    assert counts_after(lambda: compile_(cache=False)) == (0, 0, 0)
    assert results[3].artifacts == results[0].artifacts
    assert len([f for f in os.listdir(cache) if f.endswith(".nkc")]) == 2


def test_run_and_kernel_hit_the_cache(cache):
    module = nabla.Module.parse(KERNEL)
    a = np.arange(64, dtype=np.float32)
    outputs = []
    run = lambda **kw: outputs.append(
        nabla.run(module, "scale", 1, 64, [a, 64], **kw)[0])
    assert counts_after(run) == (0, 1, 1)
    assert counts_after(run) == (1, 0, 0)
    assert counts_after(lambda: run(cache=False)) == (0, 0, 0)
    # A new Kernel object compiles again: from the cache.
    kernel = nabla.Kernel(module, "scale")
    assert counts_after(lambda: outputs.append(
        kernel(a, 64, grid=1, block=64)[0])) == (1, 0, 0)
    for out in outputs:
        np.testing.assert_array_equal(out, 2 * a)


def test_malformed_cache_size_is_a_value_error(cache, monkeypatch):
    monkeypatch.setenv("NABLA_CACHE_SIZE", "a lot")
    with pytest.raises(ValueError, match="NABLA_CACHE_SIZE"):
        nabla.compile(nabla.Module.parse(KERNEL), "spirv")


CUDA_SOURCE = """__global__ void twice(float *a, int n) {
  int i = threadIdx.x;
  if (i < n) a[i] = 2.0f * a[i];
}
"""


def test_cuda_source_is_cached(cache, tmp_path, monkeypatch):
    """nabla.cuda's clang step goes through the cache too: the same source
    and options give clang's IR from it (clang, a logging wrapper here, does
    not run), warnings included; other options are a miss."""
    log = tmp_path / "clang-runs"
    clang = tmp_path / "clang"
    clang.write_text(f'#!/bin/sh\necho run >> "{log}"\n'
                     f'exec /usr/lib/llvm-22/bin/clang "$@"\n')
    clang.chmod(0o755)
    monkeypatch.setenv("NABLA_CLANG", str(clang))
    runs = lambda: len(log.read_text().split()) if log.exists() else 0
    first = nabla.cuda.llvm_ir(CUDA_SOURCE)
    assert runs() == 1
    assert counts_after(lambda: nabla.cuda.llvm_ir(CUDA_SOURCE)) == (2, 0, 0)
    assert runs() == 1 and nabla.cuda.llvm_ir(CUDA_SOURCE) == first
    nabla.cuda.llvm_ir(CUDA_SOURCE, ("-O1",))
    assert runs() == 2
    with pytest.warns(nabla.cuda.CompileWarning, match="unused"):
        nabla.cuda.llvm_ir(CUDA_SOURCE + "static int unused_fn() { return 1; }"
                           "\n#warning unused\n")
    with pytest.warns(nabla.cuda.CompileWarning, match="unused"):
        nabla.cuda.llvm_ir(CUDA_SOURCE + "static int unused_fn() { return 1; }"
                           "\n#warning unused\n")
    assert runs() == 3
    a = np.arange(8, dtype=np.float32)
    out = nabla.cuda.Kernel(CUDA_SOURCE, "twice")(a, 8, grid=1, block=8)[0]
    np.testing.assert_array_equal(out, 2 * a)
    assert runs() == 3
