# ===- test_bad_inputs.py - Hostile inputs to the runtime tools ----------=== #
#
# The runtime's readers and the launch path on input that crashed them or
# was silently accepted (found by fuzzing the tools): every case is a
# message and exit status 1 (2 for usage errors), never a signal or an
# uncaught exception.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import struct
import subprocess

import numpy as np
import pytest

from test_run_kernels import CORPUS, launch, run, tool

SEED = os.path.join(CORPUS, "seed_primal.mlir")


def write_npy(path, header, data=b""):
    """A hand-made .npy file (version 1) with `header` as its dict."""
    text = header.encode()
    pad = (64 - (10 + len(text) + 1) % 64) % 64
    text += b" " * pad + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data)
    return path


def compile_spirv(tmp_path):
    out = tmp_path / "compiled"
    run([tool("nabla-compile"), SEED, "--target=spirv", "--block=4", "-o", str(out)])
    return out


def test_directory_given_as_npy(tmp_path):
    folder = tmp_path / "a.npy"
    folder.mkdir()
    result = run([tool("nabla-run"), SEED, "--kernel=mul_kernel", "--grid=1", "--block=4",
                  f"--arg={folder}", "--arg=index:4"], expect=1)
    assert "is not a regular file" in result.stderr


def test_directory_given_as_manifest(tmp_path):
    (tmp_path / "out" / "manifest.json").mkdir(parents=True)
    result = run([tool("nabla-launch"), str(tmp_path / "out"), "--kernel=k", "--grid=1",
                  "--block=1"], expect=1)
    assert "manifest.json' is not a regular file" in result.stderr


def test_directory_given_as_spirv(tmp_path):
    out = compile_spirv(tmp_path)
    (out / "kernels.spv").unlink()
    (out / "kernels.spv").mkdir()
    result = run([tool("nabla-launch"), str(out), "--kernel=mul_kernel", "--grid=1",
                  "--block=4", "--arg=index:4"], expect=1)
    assert "kernels.spv' is not a regular file" in result.stderr


@pytest.mark.parametrize("shape", ["(4611686018427387904, 4)", "(99999999999999999999,)",
                                   "(3, -1)", "(2 3,)"])
def test_npy_shape_overflow_or_garbage(tmp_path, shape):
    path = write_npy(tmp_path / "a.npy",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape,
                     b"\0" * 16)
    result = run([tool("nabla-run"), SEED, "--kernel=mul_kernel", "--grid=1", "--block=4",
                  f"--arg={path}", "--arg=index:4", "--print"], expect=1)
    assert "is not a supported .npy file" in result.stderr


@pytest.mark.parametrize("corruption", ["truncate", "flip", "odd-size"])
def test_corrupted_spirv_is_rejected_before_the_driver(tmp_path, corruption):
    out = compile_spirv(tmp_path)
    spv = out / "kernels.spv"
    words = bytearray(spv.read_bytes())
    if corruption == "truncate":
        words = words[: len(words) // 2]
    elif corruption == "flip":
        for at in range(40, len(words), 97):
            words[at] ^= 0x5A
    else:
        words += b"\x01"
    spv.write_bytes(bytes(words))
    A = np.ones(4, np.float32)
    result = launch(tmp_path / "run", "seed_primal.mlir", "mul_kernel", 1, 4,
                    [A, "index:4"], expect=1,
                    launcher=[tool("nabla-launch"), str(out)])
    assert "kernels.spv: " in result.stderr
    assert "SPIR-V" in result.stderr


@pytest.mark.parametrize("flag", ["--block=4294967300", "--block=2048", "--grid=4294967296",
                                  "--grid=0", "--timeout=99999999999999999999",
                                  "--device=99999999999"])
def test_out_of_range_launch_flags(flag):
    result = run([tool("nabla-run"), SEED, "--kernel=mul_kernel", "--grid=1", "--block=4",
                  "--arg=index:4", flag], expect=2)
    assert "malformed" in result.stderr


@pytest.mark.parametrize("flags", [["--block=4294967297"], ["--block=0"], ["--opt-level=9"]])
def test_compile_rejects_out_of_range_sizes(tmp_path, flags):
    out = tmp_path / "out"
    run([tool("nabla-compile"), SEED, "--target=spirv", "-o", str(out)] + flags, expect=2)
    assert not out.exists()


def test_kernel_adjoints_with_a_rank0_parameter(tmp_path):
    # Y[i] = W^2 for i < n, so dW = 2 W sum(dY); deterministic runs agree bit
    # for bit, the atomic one up to rounding.
    import subprocess
    blocks, n = 4, 4 * 64 - 3
    W = np.array(0.75, np.float32)
    seed = np.random.default_rng(3).uniform(-1, 1, blocks * 64).astype(np.float32)
    lowered = subprocess.run([tool("nabla-opt"), "--nabla-differentiate",
                              os.path.join(CORPUS, "rank0_adjoint.mlir")],
                             capture_output=True, text=True, timeout=300)
    assert lowered.returncode == 0, lowered.stderr
    line = next(l for l in lowered.stdout.splitlines()
                if "gpu.func @broadcast_ordered(" in l)
    words = int(line.split("nabla.scratch_words_per_block = ")[1].split(" ")[0])
    expected = 2 * 0.75 * seed[:n].astype(np.float64).sum()
    results = []
    for k, kernel in enumerate(["broadcast_ordered", "broadcast_ordered", "broadcast_atomic"]):
        args = [W, np.zeros((), np.float32), np.zeros(blocks * 64, np.float32), seed.copy(),
                f"index:{n}"]
        if kernel.endswith("ordered"):
            args.append(np.zeros(1 + words * blocks, np.int32))
        out = launch(tmp_path / f"r{k}", "rank0_adjoint.mlir", kernel, blocks, 64, args)
        np.testing.assert_allclose(out[1], expected, rtol=1e-5)
        results.append(out[1])
    assert results[0].tobytes() == results[1].tobytes()


def test_index_buffers_round_trip(tmp_path):
    A = np.array([0, -3, 5, 2**31 - 1, 7, 8, 9, 10], np.int64)
    out = launch(tmp_path / "ok", "index_buffer.mlir", "k", 1, 8,
                 [A, np.zeros(8, np.float32), "index:8"])
    np.testing.assert_array_equal(out[0], (A * 3).astype(np.int32).astype(np.int64))
    np.testing.assert_array_equal(out[1], A.astype(np.int32).astype(np.float32))
    A[2] = 2**31
    result = launch(tmp_path / "big", "index_buffer.mlir", "k", 1, 8,
                    [A, np.zeros(8, np.float32), "index:8"], expect=1)
    assert "does not fit the 32-bit SPIR-V index" in result.stderr


def test_more_bindings_than_the_device_allows(tmp_path):
    """A kernel with more buffer and scalar parameters than the Vulkan device
    has storage-buffer bindings per stage (lavapipe: 32) is refused with the
    limit, before the driver (which crashed on it)."""
    n = 64
    params = ", ".join(f"%s{i}: index" for i in range(n))
    sums = "\n".join(f"      %a{i} = arith.addi %a{i - 1}, %s{i} : index"
                     for i in range(1, n))
    source = tmp_path / "many.mlir"
    source.write_text(f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @many(%out: memref<?xindex>, {params}) kernel {{
      %a0 = arith.addi %s0, %s0 : index
{sums}
      %c0 = arith.constant 0 : index
      memref.store %a{n - 1}, %out[%c0] : memref<?xindex>
      gpu.return
    }}
  }}
}}
""")
    np.save(tmp_path / "out.npy", np.zeros(1, np.int64))
    result = subprocess.run(
        [tool("nabla-run"), str(source), "--kernel=many", "--grid=1",
         "--block=1", f"--arg={tmp_path / 'out.npy'}",
         f"--out={tmp_path / 'out'}"] + ["--arg=index:1"] * n,
        capture_output=True, text=True, timeout=300)
    if result.returncode == 0:  # a device with more bindings runs it
        assert np.load(tmp_path / "out" / "arg0.npy")[0] == n + 1
        return
    assert result.returncode == 1, result.stderr
    assert "storage-buffer bindings" in result.stderr
    assert "allows at most" in result.stderr


def test_host_program_with_more_bindings_than_the_device_allows(tmp_path):
    """The same limit in libnabla_mgpu: a host program launching a kernel
    that captures 40 buffers ends with the limit and exit status 1 on
    lavapipe (32 bindings), not a crash inside the driver."""
    n = 40
    allocs = "\n".join(f"  %m{i} = memref.alloc() : memref<1xf32>"
                        for i in range(n))
    stores = "\n".join(f"    memref.store %f, %m{i}[%c0] : memref<1xf32>"
                        for i in range(n))
    source = tmp_path / "many.mlir"
    source.write_text(f"""func.func @main() {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
{allocs}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {{
    %f = arith.constant 1.0 : f32
{stores}
    gpu.terminator
  }}
  return
}}
""")
    result = subprocess.run([tool("nabla-run"), str(source), "--entry=main"],
                            capture_output=True, text=True, timeout=300)
    if result.returncode == 0:  # a device with more bindings runs it
        return
    assert result.returncode == 1, result.stderr
    assert "storage-buffer bindings" in result.stderr, result.stderr
    assert "nabla_mgpu: error: kernel" in result.stderr
    assert "allows at most" in result.stderr


SPIN = """
gpu.module @m {
  gpu.func @spin(%x: memref<?xi32>, %n: index) kernel {
    %t = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = arith.constant 1664525 : i32
    %b = arith.constant 1013904223 : i32
    %v = memref.load %x[%t] : memref<?xi32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %v) -> (i32) {
      %m = arith.muli %s, %a : i32
      %next = arith.addi %m, %b : i32
      scf.yield %next : i32
    }
    memref.store %r, %x[%t] : memref<?xi32>
    gpu.return
  }
}
"""


def test_timeout_ends_the_tool_at_once(tmp_path):
    """A kernel past --timeout (2 million threads of 65,000 steps, about 20 s
    on lavapipe, whose loops stop after 65,535 steps): exit 1 with the error
    soon after the timeout, not after the device finished (releasing what
    the launch holds waited for it, then crashed)."""
    import time
    source = tmp_path / "spin.mlir"
    source.write_text(SPIN)
    x = tmp_path / "x.npy"
    np.save(x, np.arange(64, dtype=np.int32))
    start = time.monotonic()
    result = run([tool("nabla-run"), str(source), "--kernel=spin",
                  "--grid=32768", "--block=64", f"--arg={x}", "--arg=index:65000",
                  "--timeout=1", f"--out={tmp_path / 'out'}"], expect=1)
    assert time.monotonic() - start < 10
    assert "error: kernel 'spin' did not finish within 1 s" in result.stderr
    assert "internal error" not in result.stderr
