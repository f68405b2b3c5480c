# Mixed-precision kernels from CUDA (frontends/mixed_precision.cu,
# bf16_atomics.cu): bf16
# (`__nv_bfloat16`) and f16 (`__half`) activations with f32 math, as LLM
# training code keeps them. The raise views their buffers as bf16/f16
# (memref<?xbf16>), so the AD differentiates through the conversions; on
# SPIR-V the bf16 values are kept as i16 bits (nabla-emulate-bf16). Primal
# and Enzyme gradients against NumPy models with bf16 rounding, through
# nabla-run (bf16 buffers as uint16 bits), and nabla.check_gradient on the
# generated kernel adjoint of a bf16 kernel.
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from frontend_helpers import (BIN, check, compile_cuda, f32, mangled,
                              needs_cuda_headers, run)

RNG = np.random.default_rng(1616)
OPTS = [1, 2, 3]

pytestmark = needs_cuda_headers


def bf16_bits(x):
    """float → bfloat16 bits, round to nearest even (cvt.rn.bf16.f32)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    wide = np.asarray(bits).view(np.uint16).astype(np.uint32) << 16
    return wide.view(np.float32).astype(np.float64)


def bf16(x):
    """x rounded to bfloat16, as float64."""
    return bf16_value(bf16_bits(x))


# One bf16 rounding of a value: a relative error of at most 2^-9; a few of
# them in a chain.
BF16_RTOL = 2 ** -7


def gelu(x):
    s = 0.7978845608
    return 0.5 * x * (1 + np.tanh(s * (x + 0.044715 * x ** 3)))


def gelu_derivative(x):
    s = 0.7978845608
    t = np.tanh(s * (x + 0.044715 * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * 0.044715 * x * x)


@pytest.mark.parametrize("opt", OPTS)
def test_bf16_gelu_primal_and_gradient(tmp_path, opt):
    ll = compile_cuda(tmp_path, "mixed_precision", opt)
    n = 200
    x_bits = bf16_bits(RNG.uniform(-3, 3, n))
    x = bf16_value(x_bits)
    out = run(tmp_path, ll, "gelu_forward_kernel", 4, 64,
              [np.zeros(n, np.uint16), x_bits, f"i32:{n}"])
    assert out[0].dtype == np.uint16
    check(bf16_value(out[0]), bf16(gelu(x)), rtol=BF16_RTOL, atol=1e-6)
    dout_bits = bf16_bits(RNG.standard_normal(n))
    out = run(tmp_path, ll, "grad_gelu_forward", 4, 64,
              [np.zeros(n, np.uint16), dout_bits, x_bits,
               np.zeros(n, np.uint16), f"i32:{n}"])
    expected = bf16_value(dout_bits) * gelu_derivative(x)
    check(bf16_value(out[3]), expected, rtol=2 * BF16_RTOL, atol=1e-3)
    # A bf16 buffer takes int16 bits as well as uint16.
    out = run(tmp_path, ll, "gelu_forward_kernel", 4, 64,
              [np.zeros(n, np.int16), x_bits.view(np.int16), f"i32:{n}"])
    check(bf16_value(out[0]), bf16(gelu(x)), rtol=BF16_RTOL, atol=1e-6)


@pytest.mark.parametrize("opt", OPTS)
def test_bf16_residual_gradient(tmp_path, opt):
    ll = compile_cuda(tmp_path, "mixed_precision", opt)
    n = 130
    a, b = bf16_bits(RNG.uniform(-2, 2, n)), bf16_bits(RNG.uniform(-2, 2, n))
    out = run(tmp_path, ll, "residual_forward_kernel", 3, 64,
              [np.zeros(n, np.uint16), a, b, f"i32:{n}"])
    np.testing.assert_array_equal(out[0],
                                  bf16_bits(bf16_value(a) + bf16_value(b)))
    dout = bf16_bits(RNG.standard_normal(n))
    out = run(tmp_path, ll, "grad_residual_forward", 3, 64,
              [np.zeros(n, np.uint16), dout, a, np.zeros(n, np.uint16), b,
               np.zeros(n, np.uint16), f"i32:{n}"])
    # The adjoint of a sum is the seed, exactly.
    np.testing.assert_array_equal(out[3], dout)
    np.testing.assert_array_equal(out[5], dout)


@pytest.mark.parametrize("opt", OPTS)
def test_bf16_warp_rows_gradient(tmp_path, opt):
    """One warp per row: an f32 warp reduction of bf16 activations, bf16
    outputs scaled by it, the f32 statistic kept; its gradient needs a bf16
    atomic add, which NVVM and ROCDL compile and SPIR-V refuses."""
    ll = compile_cuda(tmp_path, "bf16_atomics", opt)
    N, C = 5, 40
    x_bits = bf16_bits(RNG.uniform(-1, 1, N * C))
    x = bf16_value(x_bits).reshape(N, C)
    s = 1 / np.sqrt((x * x).mean(axis=1) + 1e-5)
    out = run(tmp_path, ll, "rms_scale_kernel", 3, 64,
              [np.zeros(N * C, np.uint16), f32(np.zeros(N)), x_bits,
               f"i32:{N}", f"i32:{C}"])
    check(bf16_value(out[0]).reshape(N, C), bf16(x * s[:, None]),
          rtol=2 * BF16_RTOL, atol=1e-3)
    check(out[1], s, rtol=1e-4)
    # The adjoint adds into dinp at row * C + lane + 32 k, which the AD does
    # not prove thread-exclusive: a bf16 atomic add, native on NVVM and
    # ROCDL, a compare-exchange loop on the 32-bit word holding the element
    # on SPIR-V (no 16-bit atomics). Rows of C = 40 bf16 share words with
    # their neighbours' lanes.
    dout_bits = bf16_bits(RNG.standard_normal(N * C))
    dout = bf16_value(dout_bits).reshape(N, C)
    out = run(tmp_path, ll, "grad_rms_scale", 3, 64,
              [np.zeros(N * C, np.uint16), dout_bits, f32(np.zeros(N)),
               f32(np.zeros(N)), x_bits, np.zeros(N * C, np.uint16),
               f"i32:{N}", f"i32:{C}"])
    dx = dout * s[:, None] - (dout * x).sum(axis=1)[:, None] * \
        s[:, None] ** 3 * x / C
    check(bf16_value(out[5]).reshape(N, C), dx, rtol=4 * BF16_RTOL,
          atol=2e-2)
    for target in ("nvvm", "rocdl"):
        r = subprocess.run([os.path.join(BIN, "nabla-compile"), str(ll),
                            f"--target={target}", "-o",
                            str(tmp_path / f"grad-{target}")],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("opt", OPTS)
def test_bf16_packed_gradient(tmp_path, opt):
    """Eight bf16 per thread moved as one int4 (a cache-streaming load into
    a local array, a 16-byte store): the raise views every buffer as bf16,
    the gradient accumulates without atomics (each thread owns its eight
    elements), on lavapipe through SPIR-V's i16 bits."""
    ll = compile_cuda(tmp_path, "mixed_precision", opt)
    n = 8 * 80
    x_bits = bf16_bits(RNG.uniform(-2, 2, n))
    x = bf16_value(x_bits)
    out = run(tmp_path, ll, "half_square_packed_kernel", 2, 64,
              [np.zeros(n, np.uint16), x_bits, f"i32:{n}"])
    np.testing.assert_array_equal(out[0], bf16_bits(0.5 * x * x))
    dout_bits = bf16_bits(RNG.standard_normal(n))
    out = run(tmp_path, ll, "grad_half_square_packed", 2, 64,
              [np.zeros(n, np.uint16), dout_bits, x_bits,
               np.zeros(n, np.uint16), f"i32:{n}"])
    np.testing.assert_array_equal(out[3], bf16_bits(bf16_value(dout_bits) * x))


@pytest.mark.parametrize("opt", OPTS)
def test_f16_gradient(tmp_path, opt):
    ll = compile_cuda(tmp_path, "mixed_precision", opt)
    n = 100
    x = RNG.uniform(-2, 2, n).astype(np.float16)
    w = RNG.uniform(-1, 1, 4)
    out = run(tmp_path, ll, "scale_half_kernel", 2, 64,
              [np.zeros(n, np.float16), x, f32(w), f"i32:{n}"])
    assert out[0].dtype == np.float16
    expected = (x.astype(np.float32) * f32(w)[np.arange(n) % 4])
    np.testing.assert_array_equal(out[0], expected.astype(np.float16))
    dy = RNG.standard_normal(n).astype(np.float16)
    out = run(tmp_path, ll, "grad_scale_half", 2, 64,
              [np.zeros(n, np.float16), dy, x, np.zeros(n, np.float16),
               f32(w), f32(np.zeros(4)), f"i32:{n}"])
    dx = dy.astype(np.float64) * w[np.arange(n) % 4]
    check(out[3].astype(np.float64), dx, rtol=2e-3, atol=2e-3)
    dw = np.bincount(np.arange(n) % 4,
                     dy.astype(np.float64) * x.astype(np.float64), 4)
    check(out[5], dw, rtol=1e-3, atol=1e-3)


def test_bf16_check_gradient(tmp_path):
    """nabla.check_gradient on a bf16 kernel: the adjoint generated with
    bf16 shadows, finite differences taken in bf16."""
    ll = compile_cuda(tmp_path, "mixed_precision", 2)
    program = f"""
import numpy as np, nabla
ll = open({str(ll)!r}).read()
module = nabla.Module.parse_llvm_ir(ll)
rng = np.random.default_rng(3)
n = 96
x = rng.uniform(-2, 2, n).astype(np.float32).view(np.uint32)
x = ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint16)
for kernel in ({mangled(ll, "gelu_forward_kernel")!r},
               {mangled(ll, "residual_forward_kernel")!r}):
    args = [np.zeros(n, np.uint16), x, n] if "gelu" in kernel else \\
        [np.zeros(n, np.uint16), x, x[::-1].copy(), n]
    dup = [0, 1] if "gelu" in kernel else [0, 1, 2]
    report = nabla.check_gradient(module, kernel, grid=2, block=64,
                                  args=args, dup=dup)
    print(report)
    assert report["ok"], str(report)
"""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(BIN), "python")
    r = subprocess.run([sys.executable, "-c", program], capture_output=True,
                       text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_half_adjoint_on_any_launch_shape(tmp_path):
    """A bf16 adjoint proven thread-exclusive for grids of one row keeps,
    for other launch shapes, the atomic branch of its run-time check: on
    SPIR-V compare-exchange loops on 32-bit words. On a 2-D grid both rows
    store every output: its adjoint goes to one writer (an atomic exchange
    with zero), and both rows add into dinp (atomic adds on words that
    neighbouring threads update too)."""
    ll = compile_cuda(tmp_path, "mixed_precision", 2)
    n = 64
    x_bits = bf16_bits(RNG.uniform(-2, 2, n))
    x = bf16_value(x_bits)
    dout_bits = bf16_bits(RNG.standard_normal(n))
    out = run(tmp_path, ll, "grad_gelu_forward", "1,2", 64,
              [np.zeros(n, np.uint16), dout_bits, x_bits,
               np.zeros(n, np.uint16), f"i32:{n}"])
    dx = bf16_value(dout_bits) * gelu_derivative(x)
    check(bf16_value(out[3]), dx, rtol=4 * BF16_RTOL, atol=1e-2)


@pytest.mark.parametrize("arch,opt", [("sm_80", 1), ("sm_80", 2),
                                      ("sm_90", 3)])
def test_half_arithmetic(tmp_path, arch, opt):
    """Arithmetic in the half types: cuda_bf16's operators and __hfma
    (`fma.rn.bf16` with a constant operand on sm_80, `mul.bf16` on sm_90)
    and half2's `mul.f16x2`/`add.f16x2` raised as f32 operations rounded to
    the half; the bf16 weights' adjoint accumulated by atomics (on SPIR-V
    compare-exchange loops on words)."""
    ll = compile_cuda(tmp_path, "mixed_precision", opt, arch)
    n = 64
    x_bits = bf16_bits(RNG.uniform(-2, 2, n))
    w_bits = bf16_bits(RNG.uniform(-1, 1, 4))
    b_bits = bf16_bits(RNG.uniform(-1, 1, 4))
    x, w, b = bf16_value(x_bits), bf16_value(w_bits), bf16_value(b_bits)
    c = np.arange(n) % 4
    out = run(tmp_path, ll, "half_affine_kernel", 2, 64,
              [np.zeros(n, np.uint16), x_bits, w_bits, b_bits, f"i32:{n}"])
    y = bf16(bf16(x * w[c] + b[c]) - bf16(x * x))
    check(bf16_value(out[0]), y, rtol=BF16_RTOL, atol=1e-2)
    dy_bits = bf16_bits(RNG.standard_normal(n))
    dy = bf16_value(dy_bits)
    out = run(tmp_path, ll, "grad_half_affine", 2, 64,
              [np.zeros(n, np.uint16), dy_bits, x_bits,
               np.zeros(n, np.uint16), w_bits, np.zeros(4, np.uint16),
               b_bits, np.zeros(4, np.uint16), f"i32:{n}"])
    check(bf16_value(out[3]), dy * (w[c] - 2 * x), rtol=4 * BF16_RTOL,
          atol=2e-2)
    # 16 bf16 additions per channel: a few roundings of the running sum.
    check(bf16_value(out[5]), np.bincount(c, dy * x, 4), rtol=0.05,
          atol=0.1)
    check(bf16_value(out[7]), np.bincount(c, dy, 4), rtol=0.05, atol=0.1)

    m = 40  # half2 elements
    v = RNG.uniform(-2, 2, 2 * m).astype(np.float16)
    out = run(tmp_path, ll, "half2_poly_kernel", 1, 64,
              [np.zeros(2 * m, np.float16), v, f"i32:{m}"])
    v32 = v.astype(np.float32)
    expected = ((v32 * v32).astype(np.float16).astype(np.float32) +
                v32).astype(np.float16)
    np.testing.assert_array_equal(out[0], expected)
    dy = RNG.standard_normal(2 * m).astype(np.float16)
    out = run(tmp_path, ll, "grad_half2_poly", 1, 64,
              [np.zeros(2 * m, np.float16), dy, v,
               np.zeros(2 * m, np.float16), f"i32:{m}"])
    check(out[3].astype(np.float64),
          dy.astype(np.float64) * (2 * v.astype(np.float64) + 1),
          rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("opt", [2, 3])
def test_bf16_pair_atomic_scatter(tmp_path, opt):
    """llm.c's atomicAddX (the address aligned down to its word through the
    integer, a bf16 pair added by cuda_bf16's compare-exchange loop, the
    other half zero) raised as one bf16 atomic add; the scatter's gradient
    is the gather of the rows' adjoints, on lavapipe (compare-exchange on
    words) and compiled for NVVM and ROCDL (native bf16 atomics)."""
    ll = compile_cuda(tmp_path, "mixed_precision", opt)
    N, C, rows = 6, 9, 3  # odd rows: elements in either half of a word
    dout_bits = bf16_bits(RNG.uniform(-1, 1, N * C))
    dout = bf16_value(dout_bits).reshape(N, C)
    tokens = RNG.integers(0, rows, N).astype(np.int32)
    base_bits = bf16_bits(RNG.uniform(-1, 1, rows * C))
    out = run(tmp_path, ll, "token_scatter_kernel", N, 32,
              [base_bits, dout_bits, tokens, f"i32:{N}", f"i32:{C}"])
    expected = bf16_value(base_bits).reshape(rows, C).copy()
    for r in range(N):
        expected[tokens[r]] += 2 * dout[r]
    check(bf16_value(out[0]).reshape(rows, C), expected, rtol=4 * BF16_RTOL,
          atol=3e-2)
    seed_bits = bf16_bits(RNG.standard_normal(rows * C))
    out = run(tmp_path, ll, "grad_token_scatter", N, 32,
              [base_bits, seed_bits, dout_bits, np.zeros(N * C, np.uint16),
               tokens, f"i32:{N}", f"i32:{C}"])
    seed = bf16_value(seed_bits).reshape(rows, C)
    check(bf16_value(out[3]).reshape(N, C), 2 * seed[tokens],
          rtol=2 * BF16_RTOL, atol=1e-2)
    np.testing.assert_array_equal(out[1], seed_bits)
    # An infinite adjoint stays in its own element: each thread's gradient
    # reads both halves of its word and routes (select) the one it added,
    # never multiplies the other by zero (0 * inf = NaN in the neighbour).
    seed_bits[tokens[0] * C + 4] = 0x7F80
    out = run(tmp_path, ll, "grad_token_scatter", N, 32,
              [base_bits, seed_bits, dout_bits, np.zeros(N * C, np.uint16),
               tokens, f"i32:{N}", f"i32:{C}"])
    expected = 2 * bf16_value(seed_bits).reshape(rows, C)[tokens]
    actual = bf16_value(out[3]).reshape(N, C)
    assert not np.isnan(actual).any()
    np.testing.assert_array_equal(np.isinf(actual), np.isinf(expected))
    finite = np.isfinite(expected)
    check(actual[finite], expected[finite], rtol=2 * BF16_RTOL, atol=1e-2)
    for target in ("nvvm", "rocdl"):
        r = subprocess.run([os.path.join(BIN, "nabla-compile"), str(ll),
                            f"--target={target}", "-o",
                            str(tmp_path / f"scatter-{target}")],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("opt", [1, 2, 3])
def test_bf16_pair_compare_exchange_loop(tmp_path, opt):
    """llm.c's column sums: a compare-exchange loop on bf16 pairs written
    `while (old != current)`, the first attempt before the loop, raised as
    one bf16 atomic add per half; the gradient broadcasts each column's
    adjoint to its rows."""
    ll = compile_cuda(tmp_path, "mixed_precision", opt)
    N, C, blocks = 7, 12, 3
    dout_bits = bf16_bits(RNG.uniform(-1, 1, N * C))
    dout = bf16_value(dout_bits).reshape(N, C)
    base_bits = bf16_bits(RNG.uniform(-1, 1, C))
    out = run(tmp_path, ll, "column_sums_kernel", blocks, 4,
              [base_bits, dout_bits, f"i32:{N}", f"i32:{C}"])
    check(bf16_value(out[0]), bf16_value(base_bits) + dout.sum(axis=0),
          rtol=4 * BF16_RTOL, atol=5e-2)
    seed_bits = bf16_bits(RNG.standard_normal(C))
    out = run(tmp_path, ll, "grad_column_sums", blocks, 4,
              [base_bits, seed_bits, dout_bits, np.zeros(N * C, np.uint16),
               f"i32:{N}", f"i32:{C}"])
    np.testing.assert_array_equal(
        out[3].reshape(N, C), np.broadcast_to(seed_bits, (N, C)))
