# ===- test_sincos.py - Sine and cosine taken together ---------------=== #
#
# frontends/sincos.cu (CUDA: curand's Box-Muller with sincosf, an FFT
# stage's twiddles with sincospif, a rotation with __sincosf), sincos_f64.cu
# (a double phase with sincos: NVVM and ROCDL only) and frontends/hip_sincos.hip (OCML's __ocml_sincos_f32, the
# cosine returned through a private pointer), compiled by clang-22 during
# the run: the primal against float64 NumPy, the Enzyme gradient against
# central finite differences, on lavapipe. test_frontends.py compiles both
# files for every target.
# ===----------------------------------------------------------------------=== #
import json
import os
import re
import subprocess

import numpy as np
import pytest

from frontend_helpers import (BIN, check, compile_cuda, compile_hip, f32,
                              finite_differences, needs_cuda_headers, run)

RNG = np.random.default_rng(1806)
OPTS = [1, 2, 3]


def box_muller(u1, u2):
    r = np.sqrt(-2 * np.log(u1))
    return [r * np.cos(6.2831853 * u2), r * np.sin(6.2831853 * u2)]


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_box_muller(tmp_path, opt):
    ll = compile_cuda(tmp_path, "sincos", opt)
    n = 100
    u1, u2 = RNG.uniform(0.05, 1, n), RNG.uniform(0, 1, n)
    zero = np.zeros(n)
    out = run(tmp_path, ll, "box_muller_kernel", 2, 64,
              [f32(u1), f32(u2), f32(zero), f32(zero), f"i32:{n}"])
    z0, z1 = box_muller(u1, u2)
    check(out[2], z0)
    check(out[3], z1)
    w0, w1 = RNG.standard_normal(n), RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_box_muller", 2, 64,
              [f32(u1), f32(zero), f32(u2), f32(zero), f32(zero), f32(w0),
               f32(zero), f32(w1), f"i32:{n}"])
    du1, du2 = finite_differences(lambda v: box_muller(*v), [u1, u2],
                                  [w0, w1])
    check(out[1], du1, rtol=5e-3, atol=5e-3)
    check(out[3], du2, rtol=5e-3, atol=5e-3)
    np.testing.assert_array_equal(out[5], 0)  # outputs' shadows consumed
    np.testing.assert_array_equal(out[7], 0)


def fft_stage(x, shift, n):
    """x: (n, 2) real/imaginary; the radix-2 stage with twiddles
    exp(-2 pi i (k + shift) / n)."""
    h = n // 2
    z = x[:, 0] + 1j * x[:, 1]
    k = np.arange(h)
    w = np.exp(-2j * np.pi * (k + shift[0]) / n)
    y = np.concatenate([z[:h] + w * z[h:], z[:h] - w * z[h:]])
    return [np.stack([y.real, y.imag], axis=1)]


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("n", [2, 64, 200])
def test_fft_stage_twiddles(tmp_path, opt, n):
    ll = compile_cuda(tmp_path, "sincos", opt)
    x, shift = RNG.uniform(-1, 1, (n, 2)), np.array([0.3])
    flat = np.zeros(2 * n)  # float2 buffers as their floats
    out = run(tmp_path, ll, "fft_stage_kernel", 2, 64,
              [f32(x.ravel()), f32(flat), f32(shift), f"i32:{n}"])
    check(out[1].reshape(n, 2), fft_stage(x, shift, n)[0])
    w = RNG.standard_normal((n, 2))
    out = run(tmp_path, ll, "grad_fft_stage", 2, 64,
              [f32(x.ravel()), f32(flat), f32(flat), f32(w.ravel()),
               f32(shift), f32(np.zeros(1)), f"i32:{n}"])
    dx, dshift = finite_differences(lambda v: fft_stage(v[0], v[1], n),
                                    [x, shift], [w])
    check(out[1].reshape(n, 2), dx)
    check(out[5], dshift, rtol=5e-3, atol=5e-3)


def rotate(px, py, angle):
    c, s = np.cos(angle), np.sin(angle)
    return [c * px - s * py, s * px + c * py]


def check_rotation(tmp_path, ll, rtol, atol):
    """rotate_kernel against NumPy and grad_rotate against finite
    differences (the CUDA and the HIP file define the same kernels)."""
    n = 70
    px, py = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, n)
    angle = RNG.uniform(-3, 3, n)
    zero = np.zeros(n)
    out = run(tmp_path, ll, "rotate_kernel", 2, 64,
              [f32(px), f32(py), f32(angle), f32(zero), f32(zero),
               f"i32:{n}"])
    qx, qy = rotate(px, py, angle)
    check(out[3], qx, rtol=rtol, atol=atol)
    check(out[4], qy, rtol=rtol, atol=atol)
    wx, wy = RNG.standard_normal(n), RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_rotate", 2, 64,
              [f32(px), f32(zero), f32(py), f32(zero), f32(angle), f32(zero),
               f32(zero), f32(wx), f32(zero), f32(wy), f"i32:{n}"])
    dpx, dpy, dangle = finite_differences(lambda v: rotate(*v),
                                          [px, py, angle], [wx, wy])
    for k, expected in ((1, dpx), (3, dpy), (5, dangle)):
        check(out[k], expected, rtol=max(rtol, 2e-3), atol=max(atol, 2e-4))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_fast_sincos_rotation(tmp_path, opt):
    # __sincosf: the fast path, 1e-3 relative.
    check_rotation(tmp_path, compile_cuda(tmp_path, "sincos", opt), 1e-3, 1e-4)


@needs_cuda_headers
@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv"])
def test_double_sincos(tmp_path, target):
    """`sincos` on doubles raises to f64 math.sin/math.cos and its gradient
    compiles for NVVM (ptxas) and ROCDL; SPIR-V has no f64 transcendentals:
    a located error at the call."""
    ll = compile_cuda(tmp_path, "sincos_f64", 2)
    flags = {"nvvm": ["--chip=sm_90"], "rocdl": [], "spirv": ["--block=64"]}
    result = subprocess.run(
        [os.path.join(BIN, "nabla-compile"), str(ll), f"--target={target}",
         "-o", str(tmp_path / target)] + flags[target],
        capture_output=True, text=True, timeout=300)
    if target == "spirv":
        assert result.returncode == 1
        assert re.search(r"sincos_f64\.O2\.ll:\d+:\d+: error: 'math\.(sin|cos)' "
                         r"op on f64 has no lowering for the spirv target",
                         result.stderr), result.stderr
    else:
        assert result.returncode == 0, result.stderr
        manifest = json.loads((tmp_path / target / "manifest.json").read_text())
        assert any("grad_phase" in k["name"] for k in manifest["kernels"])


@pytest.mark.parametrize("opt", [1, 2])
def test_hip_ocml_sincos(tmp_path, opt):
    check_rotation(tmp_path, compile_hip(tmp_path, "hip_sincos", opt), 2e-3,
                   2e-4)
