# ===- frontend_helpers.py - Shared helpers of the frontend tests --------=== #
#
# Compile CUDA/HIP sources under frontends/ with clang-22, name kernels as the
# IR names them, run them with nabla-run, and reference gradients by central
# finite differences in float64: used by test_frontends.py and
# test_production_idioms.py.
# ===----------------------------------------------------------------------=== #
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
SOURCES = os.path.join(HERE, "frontends")
CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
CUDA_PATH = "/usr/local/cuda"

# CUDA 13 keeps libcu++ (cuda/std/..., which cooperative groups includes)
# under include/cccl.
CCCL = ([f"-isystem{os.path.join(CUDA_PATH, 'include', 'cccl')}"]
        if os.path.isdir(os.path.join(CUDA_PATH, "include", "cccl")) else [])

needs_cuda_headers = pytest.mark.skipif(
    not os.path.isdir(os.path.join(CUDA_PATH, "include")),
    reason="clang's CUDA mode needs the CUDA toolkit headers")


def compile_cuda(tmp_path, source, opt, arch="sm_80"):
    """clang-22's device-only LLVM IR of frontends/<source>.cu."""
    suffix = "" if arch == "sm_80" else f".{arch}"
    out = tmp_path / f"{source}.O{opt}{suffix}.ll"
    if not out.exists():
        result = subprocess.run(
            [CLANG, "-x", "cuda", "--cuda-device-only",
             f"--cuda-gpu-arch={arch}", f"--cuda-path={CUDA_PATH}",
             "-nocudalib", f"-O{opt}", "-S", "-emit-llvm",
             "-Wno-unknown-cuda-version"] + CCCL +
            [os.path.join(SOURCES, f"{source}.cu"), "-o", str(out)],
            capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
    return out


def compile_hip(tmp_path, source, opt):
    """clang-22's device-only LLVM IR of frontends/<source>.hip for gfx90a
    (-nogpulib -nogpuinc: no ROCm needed; frontends/hip_min.h stands in for
    the HIP headers)."""
    out = tmp_path / f"{source}.O{opt}.ll"
    if not out.exists():
        result = subprocess.run(
            [CLANG, "-x", "hip", "--cuda-device-only", "--offload-arch=gfx90a",
             "-nogpulib", "-nogpuinc", f"-O{opt}", "-S", "-emit-llvm",
             f"-I{SOURCES}", os.path.join(SOURCES, f"{source}.hip"), "-o",
             str(out)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
    return out


def mangled(ll, name):
    """The IR's name of the C++ function `name` (Itanium mangling)."""
    match = re.search(rf"define [^@]*@(_Z{len(name)}{name}\w*)\(",
                      ll.read_text())
    assert match, f"no kernel {name} in {ll}"
    return match.group(1)


def run_named(tmp_path, ll, kernel, grid, block, args, extra=(), env=None):
    """nabla-run on the .ll, the kernel named as the IR names it (in `env`,
    else this process's environment); the final value of every buffer
    argument."""
    work = tmp_path / f"run-{kernel}-{len(list(tmp_path.iterdir()))}"
    work.mkdir()
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(work / f"in{k}.npy", arg)
            specs.append(f"--arg={work / f'in{k}.npy'}")
        else:
            specs.append(f"--arg={arg}")
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll), f"--kernel={kernel}",
         f"--grid={grid}", f"--block={block}", f"--out={work / 'out'}"] +
        specs + list(extra), capture_output=True, text=True, timeout=300,
        env=env)
    assert result.returncode == 0, result.stderr
    return {k: np.load(work / "out" / f"arg{k}.npy")
            for k, arg in enumerate(args) if isinstance(arg, np.ndarray)}


def run(tmp_path, ll, kernel, grid, block, args, extra=(), env=None):
    """nabla-run on the .ll (kernel named by its C++ name); the final value of
    every buffer argument."""
    return run_named(tmp_path, ll, mangled(ll, kernel), grid, block, args,
                     extra, env)


def finite_differences(model, inputs, seeds, h=1e-6):
    """J^T w of model (a map from a list of float64 arrays to a list of
    float64 arrays) by central differences of <model(s), w>."""
    grads = []
    for i, x in enumerate(inputs):
        g = np.zeros_like(x)
        for j in range(x.size):
            plus = [v.copy() for v in inputs]
            minus = [v.copy() for v in inputs]
            plus[i].flat[j] += h
            minus[i].flat[j] -= h
            fp = sum(np.vdot(o, w) for o, w in zip(model(plus), seeds))
            fm = sum(np.vdot(o, w) for o, w in zip(model(minus), seeds))
            g.flat[j] = (fp - fm) / (2 * h)
        grads.append(g)
    return grads


def f32(x):
    return np.asarray(x, dtype=np.float32)


def check(actual, expected, rtol=2e-3, atol=2e-4):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def compile_for_target(ll, target, out, block=64, extra=()):
    """nabla-compile of `ll` for `target` into `out` as the suites compile
    for every target (NVVM for sm_90, SPIR-V and Metal for blocks of
    `block`), plus `extra` options; SPIR-V output is validated by spirv-val
    (NVVM's is assembled by ptxas, which writes the cubin). The finished
    process and, when it succeeded, the manifest."""
    flags = {"nvvm": ["--chip=sm_90"], "rocdl": [],
             "spirv": [f"--block={block}"],
             "metal": [f"--block={block}"]}[target]
    result = subprocess.run(
        [os.path.join(BIN, "nabla-compile"), str(ll), f"--target={target}",
         "-o", str(out)] + flags + list(extra),
        capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        return result, None
    if target == "spirv":
        val = subprocess.run(
            ["spirv-val", "--target-env", "vulkan1.1",
             str(out / "kernels.spv")], capture_output=True, text=True)
        assert val.returncode == 0, val.stderr
    return result, json.loads((out / "manifest.json").read_text())


def linked_lists(lengths, rng):
    """Disjoint lists in a shuffled pool of nodes: the head of each list and
    each node's successor (-1 ends a list or marks an empty one)."""
    total = int(sum(lengths))
    order = rng.permutation(total)
    head = np.full(len(lengths), -1, np.int32)
    successor = np.full(max(total, 1), -1, np.int32)
    start = 0
    for k, length in enumerate(lengths):
        nodes = order[start:start + length]
        start += length
        if length:
            head[k] = nodes[0]
        successor[nodes[:-1]] = nodes[1:]
    return head, successor
