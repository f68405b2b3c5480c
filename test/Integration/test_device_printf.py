# ===- test_device_printf.py - printf in CUDA device code ----------------=== #
#
# clang lowers device printf to vprintf with an argument buffer; the raiser
# turns it into gpu.printf (DevicePrintf.cpp), which the Vulkan runtime prints
# from a buffer after the launch (the manifest records the formats), NVVM
# lowers to vprintf again and ROCDL to its printf. A kernel's lines come out
# on stdout; its gradient still computes the right thing while the forward
# sweep prints. Metal has no printf reader: a located error.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import json
import os
import re
import subprocess

import numpy as np

from frontend_helpers import (BIN, check, compile_cuda, mangled,
                              needs_cuda_headers)


def nabla_run(tmp_path, ll, kernel, args, grid=1, block=64):
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(tmp_path / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp_path / f'in{k}.npy'}")
        else:
            specs.append(f"--arg={arg}")
    return subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll),
         f"--kernel={mangled(ll, kernel)}", f"--grid={grid}",
         f"--block={block}", f"--out={tmp_path / 'out'}"] + specs,
        capture_output=True, text=True, timeout=300)


@needs_cuda_headers
def test_kernel_prints_its_lines(tmp_path):
    ll = compile_cuda(tmp_path, "device_printf", 2)
    x = (np.arange(64) * 5).astype(np.float32)
    r = nabla_run(tmp_path, ll, "report", [x, "i32:60", "i64:-7"])
    assert r.returncode == 0, r.stderr
    lines = sorted(r.stdout.splitlines(), key=lambda l: int(re.search(
        r"x\[(\d+)\]", l).group(1)))
    # Threads 21..59 have x > 100 (threads from 60 on are past n).
    assert lines == [f"big x[{i}] = {5.0 * i:.1f} (n=60, tag=-7)"
                     for i in range(21, 60)], r.stdout


@needs_cuda_headers
def test_gradient_of_a_printing_function(tmp_path):
    ll = compile_cuda(tmp_path, "device_printf", 2)
    n = 50
    x = np.linspace(-1, 1, 64).astype(np.float32)
    dy = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    zeros = np.zeros(64, np.float32)
    r = nabla_run(tmp_path, ll, "grad_square_noisy",
                  [x, zeros, zeros, dy, f"i32:{n}"])
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    check(np.load(out / "arg1.npy")[:n], 2 * x[:n] * dy[:n])
    # The forward sweep runs the primal, printing once.
    assert r.stdout == f"y[0] = {float(x[0]) ** 2:f}\n", r.stdout


@needs_cuda_headers
def test_every_target(tmp_path):
    ll = compile_cuda(tmp_path, "device_printf", 2)
    for target, flags in [("nvvm", ["--chip=sm_90"]), ("rocdl", []),
                          ("spirv", ["--block=64"])]:
        out = tmp_path / target
        r = subprocess.run([os.path.join(BIN, "nabla-compile"), str(ll),
                            f"--target={target}", "-o", str(out)] + flags,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{target}: {r.stderr}"
        manifest = json.loads((out / "manifest.json").read_text())
        if target == "spirv":
            layout = manifest["printf"]["kernels"]
            assert "big x[%d] = %.1f (n=%d, tag=%lld)\n" in layout["formats"]
            printing = {k["name"] for k in manifest["kernels"]
                        if any(b["kind"] == "printf" for b in k["bindings"])}
            assert printing == set(layout["kernels"])
    r = subprocess.run([os.path.join(BIN, "nabla-compile"), str(ll),
                        "--target=metal", "--block=64", "-o",
                        str(tmp_path / "metal")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert re.search(r"device_printf\.O2\.ll:\d+:\d+: error: 'gpu\.printf' op "
                     r"prints, which the metal target does not support",
                     r.stderr), r.stderr
