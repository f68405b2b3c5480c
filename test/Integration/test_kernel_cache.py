# ===- test_kernel_cache.py - The kernel cache from the command line -----=== #
#
# nabla-compile and nabla-run reuse compiled artifacts from NABLA_CACHE_DIR
# (docs/Cache.md): a hit writes the files a compile writes, any change of the
# input, an option or the toolchain is a miss, a damaged entry is rebuilt and
# never used, concurrent writers leave one valid entry, the size cap evicts
# the least recently used entries, and a cache that cannot be written is a
# silent miss. Hits and misses are read from NABLA_CACHE_VERBOSE's lines.
# The cache is off for every other test (conftest.py); each test here gets
# its own directory.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import filecmp
import os
import re
import subprocess

import numpy as np
import pytest

BIN = os.environ.get("NABLA_BIN", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))), "build", "bin"))
PTXAS = os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin",
                     "ptxas")

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


def cache_env(cache, **extra):
    env = dict(os.environ, NABLA_CACHE_DIR=str(cache), NABLA_CACHE_VERBOSE="1")
    env.pop("NABLA_NO_CACHE", None)
    env.pop("NABLA_CACHE_SIZE", None)
    env.update(extra)
    return env


def events(stderr):
    """The cache's verbose lines: [(event, key)]."""
    return re.findall(r"^nabla-cache: (hit|miss|stored|corrupt entry|evicted) "
                      r"([0-9a-f]{64})", stderr, re.M)


def compile_kernel(source, cache, out, *flags, target="spirv", **extra):
    result = subprocess.run(
        [os.path.join(BIN, "nabla-compile"), str(source), f"--target={target}",
         "--block=64", *flags, "-o", str(out)],
        env=cache_env(cache, **extra), capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stderr
    return [event for event, _ in events(result.stderr)]


def entries(cache):
    return sorted(p for p in os.listdir(cache) if p.endswith(".nkc"))


def same_files(a, b):
    names = sorted(os.listdir(a))
    assert names == sorted(os.listdir(b))
    match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    assert not mismatch and not errors, (mismatch, errors)


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "scale.mlir"
    path.write_text(KERNEL)
    return path


def test_second_compile_is_a_hit_with_the_same_files(source, tmp_path):
    cache = tmp_path / "cache"
    assert compile_kernel(source, cache, tmp_path / "a") == ["miss", "stored"]
    assert compile_kernel(source, cache, tmp_path / "b") == ["hit"]
    same_files(tmp_path / "a", tmp_path / "b")
    assert len(entries(cache)) == 1


@pytest.mark.parametrize("change", [
    "input", "opt-level", "abi", "target", "dynamic-shared-memory",
    "toolchain"])
def test_any_change_is_a_miss(source, tmp_path, change):
    cache = tmp_path / "cache"
    compile_kernel(source, cache, tmp_path / "a")
    flags, target, extra = [], "spirv", {}
    if change == "input":
        # The same path, one op changed.
        source.write_text(KERNEL.replace("arith.addf", "arith.mulf"))
    elif change == "target":
        target = "metal"
    elif change == "dynamic-shared-memory":
        flags = ["--dynamic-shared-memory=256"]
    elif change == "toolchain":
        # Another CUDA toolkit (the same files under another root) for the
        # same NVVM compile.
        if not os.path.exists(PTXAS):
            pytest.skip("no ptxas")
        target = "nvvm"
        compile_kernel(source, cache, tmp_path / "b", target=target)
        root = os.path.dirname(os.path.dirname(PTXAS))
        other = tmp_path / "other-cuda"
        (other / "bin").mkdir(parents=True)
        (other / "nvvm").mkdir()
        os.symlink(PTXAS, other / "bin" / "ptxas")
        os.symlink(os.path.join(root, "nvvm", "libdevice"),
                   other / "nvvm" / "libdevice")
        extra = {"CUDA_PATH": str(other)}
    else:
        flags = {"opt-level": ["--opt-level=1"], "abi": ["--abi=v1"]}[change]
    assert compile_kernel(source, cache, tmp_path / "c", *flags,
                          target=target, **extra) == ["miss", "stored"]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_damaged_entry_is_rebuilt(source, tmp_path, damage):
    cache = tmp_path / "cache"
    compile_kernel(source, cache, tmp_path / "a")
    entry = cache / entries(cache)[0]
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[:len(data) - 100]
    elif damage == "flip":
        data[len(data) // 2] ^= 0x10
    else:
        data = b""
    entry.write_bytes(bytes(data))
    assert compile_kernel(source, cache, tmp_path / "b") == [
        "corrupt entry", "stored"]
    same_files(tmp_path / "a", tmp_path / "b")
    assert compile_kernel(source, cache, tmp_path / "c") == ["hit"]


def test_concurrent_writers_leave_one_valid_entry(source, tmp_path):
    cache = tmp_path / "cache"
    writers = [subprocess.Popen(
        [os.path.join(BIN, "nabla-compile"), str(source), "--target=spirv",
         "--block=64", "-o", str(tmp_path / f"out{k}")],
        env=cache_env(cache), stderr=subprocess.PIPE, text=True)
        for k in range(4)]
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr
    for k in range(1, 4):
        same_files(tmp_path / "out0", tmp_path / f"out{k}")
    # One entry, no temporary left behind, and it is valid.
    assert os.listdir(cache) == entries(cache) and len(entries(cache)) == 1
    assert compile_kernel(source, cache, tmp_path / "again") == ["hit"]
    same_files(tmp_path / "out0", tmp_path / "again")


def test_small_cap_evicts_least_recently_used(source, tmp_path):
    cache = tmp_path / "cache"
    compile_kernel(source, cache, tmp_path / "a", "--subgroup-size=32")
    size = os.path.getsize(cache / entries(cache)[0])
    cap = str(int(size * 2.5))
    compile_kernel(source, cache, tmp_path / "b", "--subgroup-size=16",
                   NABLA_CACHE_SIZE=cap)
    first, second = sorted(entries(cache),
                           key=lambda e: os.path.getmtime(cache / e))
    # Make the first entry the oldest, then use it: the second is now the
    # least recently used.
    os.utime(cache / first, (1, 1))
    os.utime(cache / second, (2, 2))
    assert compile_kernel(source, cache, tmp_path / "a2", "--subgroup-size=32",
                          NABLA_CACHE_SIZE=cap) == ["hit"]
    assert compile_kernel(source, cache, tmp_path / "c", "--subgroup-size=8",
                          NABLA_CACHE_SIZE=cap) == ["miss", "stored",
                                                    "evicted"]
    assert second not in entries(cache) and first in entries(cache)
    assert sum(os.path.getsize(cache / e) for e in entries(cache)) <= int(cap)
    assert compile_kernel(source, cache, tmp_path / "b2", "--subgroup-size=16",
                          NABLA_CACHE_SIZE=cap)[:2] == ["miss", "stored"]


def test_unwritable_cache_is_a_silent_miss(source, tmp_path):
    # Below a regular file no directory can be made (also for root, which
    # file modes do not stop).
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = cache_env(blocker / "cache")
    env.pop("NABLA_CACHE_VERBOSE")
    result = subprocess.run(
        [os.path.join(BIN, "nabla-compile"), str(source), "--target=spirv",
         "-o", str(tmp_path / "out")], env=env, capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == ""
    assert (tmp_path / "out" / "manifest.json").exists()


def test_no_cache_neither_reads_nor_writes(source, tmp_path):
    cache = tmp_path / "cache"
    assert compile_kernel(source, cache, tmp_path / "a", "--no-cache") == []
    assert not cache.exists()
    compile_kernel(source, cache, tmp_path / "b")
    assert compile_kernel(source, cache, tmp_path / "c", "--no-cache") == []
    assert compile_kernel(source, cache, tmp_path / "d",
                          NABLA_NO_CACHE="1") == []


def test_failed_compile_is_not_stored(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(KERNEL.replace("memref.store %b, %A[%i] : memref<?xf32>",
                                  "memref.store %b, %A[%i] : memref<?xf64>"))
    cache = tmp_path / "cache"
    for _ in range(2):
        result = subprocess.run(
            [os.path.join(BIN, "nabla-compile"), str(bad), "--target=spirv",
             "-o", str(tmp_path / "out")], env=cache_env(cache),
            capture_output=True, text=True)
        assert result.returncode == 1 and "error:" in result.stderr
        assert "stored" not in result.stderr
    assert not cache.exists() or entries(cache) == []


@pytest.mark.skipif(not os.path.exists(PTXAS), reason="no ptxas")
def test_nvvm_hit_skips_ptxas(source, tmp_path):
    cache = tmp_path / "cache"
    assert compile_kernel(source, cache, tmp_path / "a",
                          target="nvvm") == ["miss", "stored"]
    # ptxas replaced by one that fails: a hit does not run it.
    fake = tmp_path / "cuda" / "bin"
    fake.mkdir(parents=True)
    (fake / "ptxas").write_text("#!/bin/sh\nexit 3\n")
    (fake / "ptxas").chmod(0o755)
    assert compile_kernel(source, cache, tmp_path / "b",
                          target="nvvm") == ["hit"]
    same_files(tmp_path / "a", tmp_path / "b")
    assert sorted(os.listdir(tmp_path / "b")) == [
        "kernels.cubin", "kernels.ptx", "manifest.json"]


def test_nabla_run_hits_the_cache(source, tmp_path):
    cache = tmp_path / "cache"
    np.save(tmp_path / "a.npy", np.arange(64, dtype=np.float32))

    def run(out, *flags):
        result = subprocess.run(
            [os.path.join(BIN, "nabla-run"), str(source), "--kernel=scale",
             "--grid=1", "--block=64", f"--arg={tmp_path / 'a.npy'}",
             "--arg=index:64", f"--out={tmp_path / out}", *flags],
            env=cache_env(cache), capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return [event for event, _ in events(result.stderr)]

    assert run("r1") == ["miss", "stored"]
    assert run("r2") == ["hit"]
    assert run("r3", "--no-cache") == []
    expected = 2 * np.arange(64, dtype=np.float32)
    for out in ("r1", "r2", "r3"):
        np.testing.assert_array_equal(np.load(tmp_path / out / "arg0.npy"),
                                      expected)


CUDA_SOURCE = """#include "factor.h"
__global__ void scale_kernel(float *a, int n) {
  int i = threadIdx.x;
  if (i < n) a[i] = a[i] * FACTOR;
}
"""


def test_cuda_source_hit_skips_clang(tmp_path):
    """nabla-run FILE.cu: clang's output is cached under the command, the
    source and the identities of every file it included (two entries: the
    include list, then the IR), so a rerun skips clang (a logging wrapper
    as NABLA_CLANG counts its runs), an edited header is a miss with the
    new result, --no-cache runs clang, and a source clang rejects is not
    stored."""
    cache = tmp_path / "cache"
    (tmp_path / "factor.h").write_text("#define FACTOR 2.0f\n")
    (tmp_path / "k.cu").write_text(CUDA_SOURCE)
    np.save(tmp_path / "a.npy", np.arange(8, dtype=np.float32))
    log = tmp_path / "clang-runs"
    clang = tmp_path / "clang"
    real = "/usr/lib/llvm-22/bin/clang"
    clang.write_text(f'#!/bin/sh\necho run >> "{log}"\nexec {real} "$@"\n')
    clang.chmod(0o755)

    def run(out, *flags, source="k.cu"):
        result = subprocess.run(
            [os.path.join(BIN, "nabla-run"), str(tmp_path / source),
             "--kernel=scale_kernel", "--grid=1", "--block=8",
             f"--arg={tmp_path / 'a.npy'}", "--arg=i32:8",
             f"--out={tmp_path / out}", *flags],
            env=cache_env(cache, NABLA_CLANG=str(clang)), capture_output=True,
            text=True, timeout=120)
        runs = len(log.read_text().split()) if log.exists() else 0
        return result, [event for event, _ in events(result.stderr)], runs

    def output(out):
        return np.load(tmp_path / out / "arg0.npy")

    result, first, runs = run("r1")
    assert result.returncode == 0, result.stderr
    # Source list, IR (stored), then the compile's own entry.
    assert first == ["miss", "stored", "stored", "miss", "stored"], first
    assert runs == 1
    result, second, runs = run("r2")
    assert second == ["hit", "hit", "hit"] and runs == 1, (second, runs)
    np.testing.assert_array_equal(output("r2"), 2 * np.arange(8))
    # An edited header: the list hits, the IR misses, clang runs again.
    (tmp_path / "factor.h").write_text("#define FACTOR 3.00f\n")
    result, third, runs = run("r3")
    assert third[:2] == ["hit", "miss"] and runs == 2, (third, runs)
    np.testing.assert_array_equal(output("r3"), 3 * np.arange(8))
    result, fourth, runs = run("r4", "--no-cache")
    assert fourth == [] and runs == 3
    np.testing.assert_array_equal(output("r4"), 3 * np.arange(8))
    # clang's errors are reported every time, never cached.
    (tmp_path / "bad.cu").write_text(CUDA_SOURCE.replace("FACTOR;", "FACTR;"))
    for attempt in range(2):
        result, events_, runs = run("r5", source="bad.cu")
        assert result.returncode == 1 and "FACTR" in result.stderr
        assert "stored" not in events_ and runs == 4 + attempt
