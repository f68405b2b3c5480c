# ===- test_frontends.py - Kernels from real frontends: LLVM IR in -------=== #
#
# CUDA C++ under frontends/ compiled by clang-22 at -O1 and -O2 during the run
# (device-only LLVM IR, -nocudalib), each with a primal kernel and a gradient
# kernel that asks for the derivative with Enzyme's markers. nabla-run takes
# the .ll itself: the primal against a float64 NumPy model, the gradient
# (Enzyme's shadow semantics: entry shadow = cotangent w of the final state,
# exit shadow = J^T w) against central finite differences of <M(s), w> on
# that model. The same files compile for NVVM (ptxas), ROCDL, SPIR-V
# (spirv-val) and Metal.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import json
import os
import re
import subprocess

import numpy as np
import pytest

from frontend_helpers import (BIN, SOURCES, check, compile_cuda, compile_hip,
                              compile_for_target, f32, finite_differences,
                              needs_cuda_headers, run, run_named)

RNG = np.random.default_rng(15)


OPTS = [1, 2]


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_seed(tmp_path, opt):
    ll = compile_cuda(tmp_path, "seed", opt)
    n, A = 100, RNG.uniform(-1, 1, 100)
    out = run(tmp_path, ll, "mul_kernel", 2, 64, [f32(A), f"i32:{n}"])
    check(out[0], A * A)
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_mul_kernel", 2, 64,
              [f32(A), f32(w), f"i32:{n}"])
    check(out[0], A * A)
    check(out[1], 2 * A * w)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_saxpy_active_scalar(tmp_path, opt):
    ll = compile_cuda(tmp_path, "saxpy", opt)
    n, a = 90, 0.75
    x, y = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "saxpy_kernel", 2, 64,
              [f"f32:{a}", f32(x), f32(y), f"i32:{n}"])
    check(out[2], a * x + y)
    wy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_saxpy", 2, 64,
              [f"f32:{a}", f32(x), f32(np.zeros(n)), f32(y), f32(wy),
               f32(np.zeros(n)), f"i32:{n}"])
    da, dx, dy = finite_differences(
        lambda v: [v[0] * v[1] + v[2]], [np.array([a]), x, y], [wy])
    check(out[2], dx)
    check(out[4], dy)
    # enzyme_out: each thread's gradient of a, returned by the request.
    check(out[5].sum(), da[0])


def mathfns_model(x):
    return np.where(x > 0.5, np.sin(x) * np.exp(x) + np.sqrt(np.abs(x)),
                    np.where(x > -0.5,
                             np.log(x + 2) * np.cos(x) - np.tanh(x),
                             np.abs(x) ** 1.5 + np.abs(x) * x))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_math_functions_and_branches(tmp_path, opt):
    ll = compile_cuda(tmp_path, "mathfns", opt)
    n = 96
    x = RNG.uniform(-1.5, 1.5, n)
    x[np.abs(np.abs(x) - 0.5) < 0.02] = 0.25  # away from the branch edges
    out = run(tmp_path, ll, "mathfns_kernel", 2, 64,
              [f32(x), f32(np.zeros(n)), f"i32:{n}"])
    check(out[1], mathfns_model(x))
    wy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_mathfns", 2, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(wy),
               f"i32:{n}"])
    (dx,) = finite_differences(lambda v: [mathfns_model(v[0])], [x], [wy])
    check(out[1], dx)
    check(out[3], np.zeros(n))  # y is only written


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_forward_mode_request(tmp_path, opt):
    """__enzyme_fwddiff: the tangent of y for the tangent dx of x, against
    a central difference along dx, and the dot-product test with the
    reverse request of the same file."""
    ll = compile_cuda(tmp_path, "mathfns", opt)
    n = 96
    x = RNG.uniform(-1.5, 1.5, n)
    x[np.abs(np.abs(x) - 0.5) < 0.02] = 0.25
    v = RNG.standard_normal(n)
    out = run(tmp_path, ll, "fwd_mathfns", 2, 64,
              [f32(x), f32(v), f32(np.zeros(n)), f32(np.zeros(n)),
               f"i32:{n}"])
    h = 1e-6
    jv = (mathfns_model(x + h * v) - mathfns_model(x - h * v)) / (2 * h)
    check(out[2], mathfns_model(x))
    check(out[3], jv)
    w = RNG.standard_normal(n)
    rev = run(tmp_path, ll, "grad_mathfns", 2, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w),
               f"i32:{n}"])
    np.testing.assert_allclose(np.dot(out[3], w), np.dot(v, rev[1]),
                               rtol=1e-4)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("m", [0, 1, 7])
def test_runtime_bounded_loop(tmp_path, opt, m):
    ll = compile_cuda(tmp_path, "loop", opt)
    n = 70
    x, c = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, 8)
    y0 = RNG.uniform(-1, 1, n)

    def model(v):
        powers = v[0][:, None] ** np.arange(m)[None, :]
        return [powers @ v[1][:m]]

    out = run(tmp_path, ll, "poly_kernel", 2, 64,
              [f32(x), f32(c), f32(y0), f"i32:{m}", f"i32:{n}"])
    check(out[2], model([x, c])[0])
    wy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_poly", 2, 64,
              [f32(x), f32(np.zeros(n)), f32(c), f32(np.zeros(8)), f32(y0),
               f32(wy), f"i32:{m}", f"i32:{n}"])
    dx, dc = finite_differences(model, [x, c], [wy])
    check(out[1], dx)
    check(out[3], dc)
    check(out[5], np.zeros(n))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_stencil_2d_launch(tmp_path, opt):
    ll = compile_cuda(tmp_path, "stencil2d", opt)
    w, h = 13, 10
    inp = RNG.uniform(-1, 1, (h, w))
    out0 = RNG.uniform(-1, 1, (h, w))

    def model(v):
        i, o = v[0], v[1].copy()
        o[1:-1, 1:-1] = 0.5 * i[1:-1, 1:-1] + 0.125 * (
            i[1:-1, :-2] + i[1:-1, 2:] + i[:-2, 1:-1] * i[2:, 1:-1])
        return [i, o]

    args = [f32(inp.ravel()), f32(out0.ravel()), f"i32:{w}", f"i32:{h}"]
    out = run(tmp_path, ll, "stencil_kernel", "2,2", "8,8", args)
    check(out[1].reshape(h, w), model([inp, out0])[1])
    wi, wo = RNG.standard_normal((h, w)), RNG.standard_normal((h, w))
    out = run(tmp_path, ll, "grad_stencil", "2,2", "8,8",
              [f32(inp.ravel()), f32(wi.ravel()), f32(out0.ravel()),
               f32(wo.ravel()), f"i32:{w}", f"i32:{h}"])
    di, do = finite_differences(model, [inp, out0], [wi, wo])
    check(out[1].reshape(h, w), di)
    check(out[3].reshape(h, w), do)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_shared_memory_block_reduction(tmp_path, opt):
    ll = compile_cuda(tmp_path, "blocksum", opt)
    n, blocks = 150, 3
    x = RNG.uniform(-1, 1, n)

    def model(v):
        padded = np.zeros(blocks * 64)
        padded[:n] = v[0]
        return [(padded ** 2).reshape(blocks, 64).sum(axis=1)]

    out = run(tmp_path, ll, "blocksum_kernel", blocks, 64,
              [f32(x), f32(np.zeros(blocks)), f"i32:{n}"])
    check(out[1], model([x])[0])
    wo = RNG.standard_normal(blocks)
    out = run(tmp_path, ll, "grad_blocksum", blocks, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(blocks)), f32(wo),
               f"i32:{n}"])
    (dx,) = finite_differences(model, [x], [wo])
    check(out[1], dx)
    check(out[3], np.zeros(blocks))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_warp_shuffle_reduction(tmp_path, opt):
    ll = compile_cuda(tmp_path, "warpsum", opt)
    n, warps = 64, 2
    x = RNG.uniform(-1, 1, n)

    def model(v):
        return [np.sin(v[0]).reshape(warps, 32).sum(axis=1)]

    out = run(tmp_path, ll, "warpsum_kernel", 2, 32,
              [f32(x), f32(np.zeros(warps)), f"i32:{n}"])
    check(out[1], model([x])[0])
    wo = RNG.standard_normal(warps)
    out = run(tmp_path, ll, "grad_warpsum", 2, 32,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(warps)), f32(wo),
               f"i32:{n}"])
    (dx,) = finite_differences(model, [x], [wo])
    check(out[1], dx)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_atomic_scatter(tmp_path, opt):
    ll = compile_cuda(tmp_path, "scatter", opt)
    n, bins = 100, 7
    w = RNG.uniform(-1, 1, n)
    b = RNG.integers(0, bins, n).astype(np.int32)
    h0 = RNG.uniform(-1, 1, bins)

    def model(v):
        h = v[1].copy()
        np.add.at(h, b, v[0] ** 2)
        return [h]

    out = run(tmp_path, ll, "scatter_kernel", 2, 64,
              [f32(w), b, f32(h0), f"i32:{n}"])
    check(out[2], model([w, h0])[0])
    wh = RNG.standard_normal(bins)
    out = run(tmp_path, ll, "grad_scatter", 2, 64,
              [f32(w), f32(np.zeros(n)), b, f32(h0), f32(wh), f"i32:{n}"])
    dw, dh = finite_differences(model, [w, h0], [wh])
    check(out[1], dw)
    check(out[4], dh)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_struct_parameters_flattened(tmp_path, opt):
    ll = compile_cuda(tmp_path, "devarray", opt)
    n, s = 80, 1.25
    a, b0 = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, n)

    def model(v):
        return [v[0], s * v[0] * v[0]]

    # DeviceArray {float *data; long len;} by value: (buffer, i64) each.
    out = run(tmp_path, ll, "scale_kernel", 2, 64,
              [f32(a), f"i64:{n}", f32(b0), f"i64:{n}", f"f32:{s}"])
    check(out[2], model([a, b0])[1])
    wa, wb = RNG.standard_normal(n), RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_scale", 2, 64,
              [f32(a), f"i64:{n}", f32(wa), f"i64:{n}", f32(b0), f"i64:{n}",
               f32(wb), f"i64:{n}", f"f32:{s}"])
    da, db = finite_differences(model, [a, b0], [wa, wb])
    check(out[2], da)
    check(out[6], db)


@pytest.mark.parametrize("opt", OPTS)
def test_hip_seed(tmp_path, opt):
    ll = compile_hip(tmp_path, "hip_seed", opt)
    n, A = 100, RNG.uniform(-2, 2, 100)
    out = run(tmp_path, ll, "mulsin_kernel", 2, 64, [f32(A), f"i32:{n}"])
    check(out[0], A * np.sin(A))
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_mulsin", 2, 64,
              [f32(A), f32(w), f"i32:{n}"])
    check(out[1], (np.sin(A) + A * np.cos(A)) * w)


@pytest.mark.parametrize("opt", OPTS)
def test_hip_shared_tile_2d_block_atomic(tmp_path, opt):
    ll = compile_hip(tmp_path, "hip_reduce", opt)
    n, blocks = 80, 3
    x, w = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, 4)
    out0 = np.array([0.5])

    def model(v):
        rows = (np.arange(n) % 32) // 8  # threadIdx.y of each element
        return [v[2] + (np.exp(v[0]) * v[1][rows]).sum()]

    out = run(tmp_path, ll, "tilesum_kernel", blocks, "8,4",
              [f32(x), f32(w), f32(out0), f"i32:{n}"])
    check(out[2], model([x, w, out0])[0])
    wo = RNG.standard_normal(1)
    out = run(tmp_path, ll, "grad_tilesum", blocks, "8,4",
              [f32(x), f32(np.zeros(n)), f32(w), f32(np.zeros(4)), f32(out0),
               f32(wo), f"i32:{n}"])
    dx, dw, do = finite_differences(model, [x, w, out0], [wo])
    check(out[1], dx)
    check(out[3], dw)
    check(out[5], do)


JULIA = os.path.join(SOURCES, "julia")


@pytest.mark.parametrize("convention", ["v1", "v2"])
@pytest.mark.parametrize("abi", ["v1", "v2"])
def test_julia_style_seed(tmp_path, convention, abi):
    """The seed's kernels as Julia-style IR: a device array by value,
    1-based Int64 indices, a bounds-check error path, and a host object
    (Main.weights) baked (v1) or symbolic (v2), relocated at launch."""
    ll = os.path.join(JULIA, f"seed_{convention}.ll")
    W = np.array([1.5, -2.0, 0.25, 4.0], np.float32)
    np.save(tmp_path / "W.npy", W)
    reloc = [f"--reloc=Main.weights={tmp_path / 'W.npy'}", f"--abi={abi}"]
    n = 90
    A = RNG.uniform(-1, 1, n)
    w4 = W[np.arange(n) % 4].astype(np.float64)
    array = lambda x: [f32(x), f"i64:{n}", f"i64:{n}", f"i64:{n}"]
    out = run_named(tmp_path, ll, "julia_mul_kernel_1203", 2, 64, array(A),
                    reloc)
    check(out[0], A * A * w4)
    wA = RNG.standard_normal(n)
    out = run_named(tmp_path, ll, "julia_grad_mul_kernel_1207", 2, 64,
                    array(A) + array(wA), reloc)
    check(out[4], 2 * A * w4 * wA)


@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv", "metal"])
def test_julia_v1_ahead_of_time(tmp_path, target):
    """The documented v1 ahead-of-time recipe: nabla-compile --abi=v1 with
    the baked object's contents (--reloc=KEY=FILE.npy) copies them into the
    kernels on every target; the SPIR-V directory runs with nabla-launch and
    no --reloc. Without the contents, a located error naming the fix."""
    flags = {"nvvm": ["--chip=sm_90"], "rocdl": [],
             "spirv": ["--block=64"], "metal": ["--block=64"]}[target]
    W = np.array([1.5, -2.0, 0.25, 4.0], np.float32)
    np.save(tmp_path / "W.npy", W)
    ll = os.path.join(JULIA, "seed_v1.ll")
    out = tmp_path / "aot"
    compile_ = [os.path.join(BIN, "nabla-compile"), ll, "--abi=v1",
                f"--target={target}"] + flags
    result = subprocess.run(
        compile_ + ["-o", str(out), f"--reloc=Main.weights={tmp_path / 'W.npy'}"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert [r["strategy"] for r in manifest["relocations"]] == ["materialize"]
    if target == "spirv":
        n = 90
        A = RNG.uniform(-1, 1, n)
        np.save(tmp_path / "A.npy", f32(A))
        run = subprocess.run(
            [os.path.join(BIN, "nabla-launch"), str(out),
             "--kernel=julia_mul_kernel_1203", "--grid=2", "--block=64",
             f"--arg={tmp_path / 'A.npy'}"] + [f"--arg=i64:{n}"] * 3 +
            [f"--out={tmp_path / 'run'}"], capture_output=True, text=True,
            timeout=300)
        assert run.returncode == 0, run.stderr
        check(np.load(tmp_path / "run" / "arg0.npy"),
              A * A * W[np.arange(n) % 4].astype(np.float64))
    missing = subprocess.run(compile_ + ["-o", str(tmp_path / "missing")],
                             capture_output=True, text=True, timeout=300)
    assert missing.returncode == 1
    assert re.search(r"seed_v1\.ll:\d+:\d+: error: 'reloc\.global' op cannot "
                     r"be materialized.*give them with nabla-compile "
                     r"--reloc=Main\.weights=FILE\.npy", missing.stderr), \
        missing.stderr


SOURCES_ALL = ["seed", "saxpy", "mathfns", "loop", "stencil2d", "blocksum",
               "warpsum", "scatter", "devarray", "sincos"]
HIP_SOURCES = ["hip_seed", "hip_reduce", "hip_sincos"]


@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv", "metal"])
def test_julia_style_compiles_for_every_target(tmp_path, target):
    flags = {"nvvm": ["--chip=sm_90"], "rocdl": [],
             "spirv": ["--block=64"], "metal": ["--block=64"]}[target]
    for convention in ["v1", "v2"]:
        out = tmp_path / convention
        result = subprocess.run(
            [os.path.join(BIN, "nabla-compile"),
             os.path.join(JULIA, f"seed_{convention}.ll"),
             f"--target={target}", "-o", str(out)] + flags,
            capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        manifest = json.loads((out / "manifest.json").read_text())
        assert {k["name"] for k in manifest["kernels"]} == {
            "julia_mul_kernel_1203", "julia_grad_mul_kernel_1207"}
        assert [r["key"] for r in manifest["relocations"]] == ["Main.weights"]


@needs_cuda_headers
@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv", "metal"])
def test_compiles_for_every_target(tmp_path, target):
    """Every frontend file, at -O1 and -O2, for one target; SPIR-V is
    validated by spirv-val, NVVM assembled by ptxas (nabla-compile writes
    the cubin)."""
    for source in SOURCES_ALL + HIP_SOURCES:
        for opt in OPTS:
            ll = (compile_hip if source in HIP_SOURCES else compile_cuda)(
                tmp_path, source, opt)
            result, manifest = compile_for_target(
                ll, target, tmp_path / f"{source}-O{opt}-{target}")
            assert manifest, f"{source} -O{opt}: {result.stderr}"
            names = [k["name"] for k in manifest["kernels"]]
            assert len(names) >= 2 and any("grad" in n for n in names), names
