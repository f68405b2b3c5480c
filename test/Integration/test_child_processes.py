# ===- test_child_processes.py - Helper programs die with the tool -------=== #
#
# nabla-compile runs ptxas on temporary files. Interrupted (SIGTERM, as
# `timeout` or a job scheduler sends), it kills the running ptxas (which can
# take gigabytes on a large kernel) and removes its temporary files before
# the signal ends it (nabla/Support/ChildProcess.h).
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import signal
import subprocess
import time

import pytest

BIN = os.environ.get("NABLA_BIN", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))), "build", "bin"))
PTXAS = os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin",
                     "ptxas")


def big_kernel(ops):
    """A kernel of `ops` dependent ops, a third of them sin (libdevice, so
    ptxas has a lot to do)."""
    lines = ["module attributes {gpu.container_module} {",
             "  gpu.module @kernels {",
             "    gpu.func @big(%A: memref<?xf32>) kernel {",
             "      %c0 = arith.constant 0 : index",
             "      %x0 = memref.load %A[%c0] : memref<?xf32>",
             "      %k = arith.constant 1.0001 : f32"]
    for i in range(ops):
        op = "math.sin %x{}".format(i) if i % 3 == 0 else \
            "arith.mulf %x{}, %k".format(i)
        lines.append(f"      %x{i + 1} = {op} : f32")
    lines += [f"      memref.store %x{ops}, %A[%c0] : memref<?xf32>",
              "      gpu.return", "    }", "  }", "}"]
    return "\n".join(lines) + "\n"


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.exists(PTXAS), reason="no ptxas")
def test_sigterm_kills_ptxas_and_removes_temporaries(tmp_path):
    source = tmp_path / "big.mlir"
    source.write_text(big_kernel(3000))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    tool = subprocess.Popen(
        [os.path.join(BIN, "nabla-compile"), str(source), "--target=nvvm",
         "--chip=sm_90", "-o", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(scratch)})
    # Wait until ptxas runs on its input.
    deadline = time.time() + 240
    ptxas = []
    while time.time() < deadline and tool.poll() is None:
        ptxas = children_of(tool.pid)
        if ptxas and any(p.suffix == ".ptx" for p in scratch.iterdir()):
            break
        time.sleep(0.1)
    assert tool.poll() is None and ptxas, "ptxas never started"
    tool.send_signal(signal.SIGTERM)
    tool.wait(timeout=30)
    assert tool.returncode == -signal.SIGTERM
    # ptxas is gone (at most a zombie until init reaps it), and so are the
    # temporary files.
    time.sleep(0.5)
    for pid in ptxas:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        assert state == "Z", f"ptxas {pid} still running ({state})"
    assert list(scratch.iterdir()) == []
