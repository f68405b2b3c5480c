# ===- test_production_idioms.py - CUDA in the idioms of production code --=== #
#
# Kernels written the way production CUDA is (lane-redundant shared stores
# after warp all-reduces, an attention backward's loop nest, cache-hinted
# float4 loads, dynamic shared memory, type punning; warp shuffles and votes
# are in test_warp_idioms.py), compiled by clang-22 at -O1,
# -O2 and -O3 and for several chips during the run. nabla-run takes the .ll:
# the primal against a float64 NumPy model, the gradient (Enzyme's semantics)
# against central finite differences of <M(s), w> on that model, on lavapipe
# under the validation layer. Every file also compiles for NVVM (ptxas),
# ROCDL, SPIR-V (spirv-val) and Metal. Structs and pointers handed to device
# functions, and pointers choosing between buffers: test_device_calls_and_pointers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from frontend_helpers import (BIN, check, compile_cuda, compile_for_target,
                              f32, finite_differences, mangled,
                              needs_cuda_headers, run)

RNG = np.random.default_rng(30)
OPTS = [1, 2, 3]


def f64(x):
    return np.asarray(x, dtype=np.float64)


def warp_allsum_model(v):
    return v.reshape(-1, 32).sum(axis=1)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("block", [32, 64, 256])
def test_lane_redundant_shared_store(tmp_path, opt, block):
    """Every lane stores its warp's sum to partial[warp]: the gradient of
    y = x * sum(x) is dx = w * sum(x) + <x, w>; with w = 1 and the issue's
    x = arange(64) / 64, dx = 2 * sum(x) (283.5 where 63 is right before)."""
    ll = compile_cuda(tmp_path, "lane_redundant", opt)
    x = np.arange(block) / block if block == 64 else RNG.uniform(-1, 1, block)
    out = run(tmp_path, ll, "scale_by_sum_kernel", 1, block,
              [f32(x), f32(np.zeros(block))])
    check(out[1], x * x.sum())
    w = np.ones(block) if block == 64 else RNG.standard_normal(block)
    out = run(tmp_path, ll, "grad_scale_by_sum", 1, block,
              [f32(x), f32(np.zeros(block)), f32(np.zeros(block)), f32(w)])
    (dx,) = finite_differences(lambda v: [v[0] * v[0].sum()], [x], [w])
    check(out[1], dx)
    if block == 64:
        check(out[1], np.full(block, 2 * x.sum()))
    check(out[3], np.zeros(block))  # y is only written: its shadow ends zero


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_every_thread_stores_block_total(tmp_path, opt):
    """Every thread of a block stores the block's total squared to
    out[blockIdx.x] in global memory; 3 blocks of 64, a partial last one."""
    ll = compile_cuda(tmp_path, "lane_redundant", opt)
    n, blocks = 150, 3
    x = RNG.uniform(-1, 1, n)

    def model(v):
        padded = np.zeros(blocks * 64)
        padded[:n] = v[0]
        return [padded.reshape(blocks, 64).sum(axis=1) ** 2]

    out = run(tmp_path, ll, "block_square_kernel", blocks, 64,
              [f32(x), f32(np.zeros(blocks)), f"i32:{n}"])
    check(out[1], model([x])[0])
    w = RNG.standard_normal(blocks)
    out = run(tmp_path, ll, "grad_block_square", blocks, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(blocks)), f32(w),
               f"i32:{n}"])
    (dx,) = finite_differences(model, [x], [w])
    check(out[1], dx)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_causal_softmax_backward_loop_nest(tmp_path, opt):
    """A four-deep loop nest inside the bounds check (clang's loops gave an
    OpPhi naming a block that is not a predecessor): valid SPIR-V, and the
    kernel computes what NumPy does, for T not a multiple of the block."""
    ll = compile_cuda(tmp_path, "causal_softmax_grad", opt)
    batches, heads, T = 2, 3, 37
    logits = RNG.standard_normal((batches, heads, T, T))
    mask = np.tril(np.ones((T, T), bool))
    e = np.where(mask, np.exp(logits - logits.max(-1, keepdims=True)), 0)
    probs = e / e.sum(-1, keepdims=True)
    dprobs = RNG.standard_normal(probs.shape) * mask
    dlogits0 = RNG.standard_normal(probs.shape)
    out = run(tmp_path, ll, "causal_softmax_grad", 1, 64,
              [f32(dlogits0).ravel(), f32(dprobs).ravel(), f32(probs).ravel(),
               f"i32:{batches}", f"i32:{heads}", f"i32:{T}"])
    # Row r, column c <= r: sum_k<=r p_k (delta_kc - p_c) dp_k.
    inner = (probs * dprobs).sum(-1, keepdims=True)
    expected = dlogits0 + np.where(mask, probs * dprobs - probs * inner, 0)
    check(out[0].reshape(expected.shape), expected, rtol=1e-4, atol=1e-5)


def gelu(u):
    return 0.5 * u * (1 + np.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_cache_hinted_float4_gelu(tmp_path, opt):
    """__ldcs of float4s and st.global.cs stores (inline assembly) raised as
    plain loads and stores: GELU and its gradient (y dupnoneed)."""
    ll = compile_cuda(tmp_path, "cache_hints", opt)
    n4 = 50
    x = RNG.uniform(-3, 3, 4 * n4)
    out = run(tmp_path, ll, "gelu4_kernel", 1, 64,
              [f32(x), f32(np.zeros(4 * n4)), f"i32:{n4}"])
    check(out[1], gelu(x))
    w = RNG.standard_normal(4 * n4)
    out = run(tmp_path, ll, "grad_gelu4", 1, 64,
              [f32(x), f32(np.zeros(4 * n4)), f32(np.zeros(4 * n4)), f32(w),
               f"i32:{n4}"])
    (dx,) = finite_differences(lambda v: [gelu(v[0])], [x], [w])
    check(out[1], dx)


def control_flow_shapes_model(x, n, m, block):
    out = np.zeros(n)
    for tid in range(n):
        t = tid % block
        a = x[tid]
        a = {1: a + x[0], 3: a * 2, 0: a - 1}.get(tid & 3, a)
        s = 0.0
        for i in range(2):
            s += x[(tid + i) % n]
            if i < m:
                if t < 61:
                    break
                a += s
            else:
                if t == 0:
                    a += 1
                    continue
                if n > 27:
                    continue
            a += x[t % n]
        out[tid] = a + s
    return out


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("n,m", [(150, 0), (150, 1), (150, 2), (20, 0)])
def test_control_flow_shapes(tmp_path, opt, n, m):
    """A switch with an unreachable default and an unrolled break/continue
    loop (scripts/fuzz_cuda_cfg.py findings) against NumPy."""
    ll = compile_cuda(tmp_path, "control_flow_shapes", opt)
    x = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "shapes", 3, 64,
              [f32(np.zeros(n)), f32(x), f"i32:{n}", f"i32:{m}"])
    check(out[0], control_flow_shapes_model(x, n, m, 64))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("block", [32, 128])
def test_dynamic_shared_memory(tmp_path, opt, block):
    """extern __shared__ sized by --dynamic-shared-memory: a block tree
    reduction on lavapipe (SPIR-V compiles the size in)."""
    ll = compile_cuda(tmp_path, "dynamic_shared", opt)
    n, blocks = 300, 3
    x = RNG.uniform(-1, 1, n)
    padded = np.zeros(blocks * block)
    padded[:n] = x[:blocks * block]
    out = run(tmp_path, ll, "block_totals", blocks, block,
              [f32(x), f32(np.zeros(blocks)), f"i32:{n}"],
              extra=[f"--dynamic-shared-memory={4 * block}"])
    check(out[1], padded.reshape(blocks, block).sum(axis=1))


@needs_cuda_headers
def test_dynamic_shared_memory_errors(tmp_path):
    """No size: a located error naming the flag; nabla-launch refuses a size
    other than the one compiled in."""
    ll = compile_cuda(tmp_path, "dynamic_shared", 2)
    x = tmp_path / "x.npy"
    np.save(x, np.zeros(64, np.float32))
    np.save(tmp_path / "t.npy", np.zeros(1, np.float32))
    args = [f"--arg={x}", f"--arg={tmp_path / 't.npy'}", "--arg=i32:64"]
    kernel = mangled(ll, "block_totals")
    r = subprocess.run([os.path.join(BIN, "nabla-run"), str(ll),
                        f"--kernel={kernel}", "--grid=1", "--block=64",
                        f"--out={tmp_path}"] + args,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert re.search(r"\.ll:\d+:\d+: error: .*dynamic shared memory.*"
                     r"--dynamic-shared-memory=BYTES", r.stderr), r.stderr
    out = tmp_path / "compiled"
    r = subprocess.run([os.path.join(BIN, "nabla-compile"), str(ll),
                        "--target=spirv", "--block=64",
                        "--dynamic-shared-memory=256", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kernels"][0]["dynamic_shared_memory"] == 256
    r = subprocess.run([os.path.join(BIN, "nabla-launch"), str(out),
                        f"--kernel={kernel}", "--grid=1", "--block=64",
                        "--dynamic-shared-memory=128", f"--out={tmp_path}"]
                       + args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert "was compiled for 256 bytes of dynamic shared memory" in r.stderr


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_dynamic_shared_memory_gradient(tmp_path, opt):
    """Gradient requests through extern __shared__: the shadow lives after
    the primal in the launch's region (the launch passes its bytes to the
    kernel's extra i32 and reserves twice as many); a staged reversal and a
    64-thread tree reduction against their closed forms, through nabla-run
    and Python; the manifest names the parameter on every target."""
    ll = compile_cuda(tmp_path, "dynamic_shared_grad", opt)
    block = 64
    x = RNG.uniform(-1, 1, block)
    dy = RNG.standard_normal(block)
    shared = [f"--dynamic-shared-memory={4 * block}"]
    out = run(tmp_path, ll, "scaled_copy_kernel", 1, block,
              [f32(x), f32(np.zeros(block))], extra=shared)
    check(out[1], (2 * x * x)[::-1])
    out = run(tmp_path, ll, "grad_scaled_copy", 1, block,
              [f32(x), f32(np.zeros(block)), f32(np.zeros(block)), f32(dy)],
              extra=shared)
    check(out[1], 4 * x * dy[::-1])
    n, blocks = 150, 3
    x = RNG.uniform(-1, 1, n)
    dtotals = RNG.standard_normal(blocks)
    out = run(tmp_path, ll, "grad_block_totals", blocks, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(blocks)),
               f32(dtotals), f"i32:{n}"], extra=shared)
    check(out[2], np.bincount(np.arange(n) // block, x ** 2, blocks))
    check(out[1], 2 * x * dtotals[np.arange(n) // block])
    # Python passes the launch's bytes too (the caller gives none).
    program = f"""
import numpy as np, nabla
x = np.load({str(tmp_path / 'x.npy')!r})
dtotals = np.load({str(tmp_path / 'dtotals.npy')!r})
ll = open({str(ll)!r}).read()
kernel = nabla.Kernel(nabla.Module.parse_llvm_ir(ll),
                      {mangled(ll, "grad_block_totals")!r})
out = kernel(x, np.zeros_like(x), np.zeros(3, np.float32), dtotals,
             {n}, grid=3, block=64, shared_memory=256)
np.save({str(tmp_path / 'dx.npy')!r}, out[1])
"""
    np.save(tmp_path / "x.npy", f32(x))
    np.save(tmp_path / "dtotals.npy", f32(dtotals))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(BIN), "python")
    r = subprocess.run([sys.executable, "-c", program], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    check(np.load(tmp_path / "dx.npy"), 2 * x * dtotals[np.arange(n) // block])
    for target in ["nvvm", "rocdl", "spirv"]:
        out_dir = tmp_path / f"compiled-{target}"
        r = subprocess.run([os.path.join(BIN, "nabla-compile"), str(ll),
                            f"--target={target}", "--block=64",
                            "--dynamic-shared-memory=256", "-o",
                            str(out_dir)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        manifest = json.loads((out_dir / "manifest.json").read_text())
        grad = next(k for k in manifest["kernels"]
                    if k["name"] == mangled(ll, "grad_scaled_copy"))
        sizes = [p for p in grad["params"]
                 if p.get("dynamic_shared_memory_bytes")]
        assert [(p["index"], p["type"]) for p in sizes] == [(4, "i32")]
    # The manifest reader checks the mark: one i32 of a kernel using
    # dynamic shared memory.
    manifest_path = tmp_path / "compiled-spirv" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    grad = next(k for k in manifest["kernels"]
                if k["name"] == mangled(ll, "grad_scaled_copy"))
    grad["params"][0]["dynamic_shared_memory_bytes"] = True
    manifest_path.write_text(json.dumps(manifest))
    r = subprocess.run([os.path.join(BIN, "nabla-launch"),
                        str(tmp_path / "compiled-spirv"),
                        f"--kernel={grad['name']}", "--grid=1", "--block=64",
                        "--dynamic-shared-memory=256", f"--out={tmp_path}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert "dynamic shared memory size is one i32 parameter" in r.stderr, \
        r.stderr


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_type_punning(tmp_path, opt):
    """A float buffer also accessed as bytes and as int (raised as bytes,
    the float32 .npy bound as its bytes): the primal on lavapipe; a gradient
    through such an object is a located error."""
    ll = compile_cuda(tmp_path, "type_punning", opt)
    n = 100
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    out = run(tmp_path, ll, "mark", 2, 64,
              [x, np.zeros(n, np.uint8), np.zeros(n, np.int32), f"i32:{n}"])
    assert out[0].dtype == np.float32
    np.testing.assert_array_equal(out[0], -np.abs(x) * 2)
    np.testing.assert_array_equal(out[1], x.view(np.uint8)[::4])
    np.testing.assert_array_equal(out[2], np.ones(n))
    grad = compile_cuda(tmp_path, "type_punning_grad", opt)
    r = subprocess.run([os.path.join(BIN, "nabla-compile"), str(grad),
                        "--target=nvvm", "-o", str(tmp_path / "g")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert re.search(r"\.ll:\d+:\d+: error: .*differentiated float's bits",
                     r.stderr), r.stderr


def bfloat16_bits(x):
    """float32 → bfloat16 bits, ties to even (what cvt.rn.bf16.f32 does)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_half_precision_storage(tmp_path, opt):
    """cuda_fp16/cuda_bf16 conversions and half2 packing (PTX inline
    assembly in the headers) against NumPy's float16 and a bfloat16
    rounding model, bit for bit; half buffers take their bits as int16."""
    ll = compile_cuda(tmp_path, "half_precision", opt)
    n = 100
    x = RNG.uniform(-4, 4, n).astype(np.float16)
    out = run(tmp_path, ll, "scale_half", 2, 64,
              [x.view(np.int16), np.zeros(n, np.int16), np.zeros(n, np.int16),
               np.zeros(n, np.float32), "f32:1.5", f"i32:{n}"])
    v = x.astype(np.float32) * np.float32(1.5)
    np.testing.assert_array_equal(out[1].view(np.float16), v.astype(np.float16))
    np.testing.assert_array_equal(out[2].view(np.uint16), bfloat16_bits(v))
    widened = (bfloat16_bits(v).astype(np.uint32) << 16).view(np.float32)
    check(out[3], widened + x.astype(np.float32), rtol=1e-6, atol=1e-6)
    pairs = RNG.uniform(-2, 2, 2 * n).astype(np.float16)
    # half2 buffers, moved as 32-bit words, are viewed as their halves.
    out = run(tmp_path, ll, "pair_ops", 2, 64,
              [pairs, np.zeros(2 * n, np.float16), f"i32:{n}"])
    f = pairs.astype(np.float32).reshape(n, 2)
    got = out[1].reshape(n, 2)
    np.testing.assert_array_equal(got[:, 0], (f[:, 0] + f[:, 1]).astype(np.float16))
    np.testing.assert_array_equal(got[:, 1], (f[:, 0] * f[:, 1]).astype(np.float16))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("m", [0, 3, 8])
def test_zero_initialised_local_array(tmp_path, opt, m):
    """float acc[8] = {} (llvm.memset) filled for k < m: primal and
    gradient (dx = 2 x (k + 1) w for k < m) against NumPy."""
    ll = compile_cuda(tmp_path, "local_arrays", opt)
    n = 64
    x = RNG.uniform(-1, 1, 8 * n)
    weights = np.arange(1, 9) * (np.arange(8) < m)

    def model(v):
        return [(v[0].reshape(n, 8) ** 2 * weights).sum(axis=1)]

    out = run(tmp_path, ll, "weighted_kernel", 1, 64,
              [f32(x), f32(np.zeros(n)), f"i32:{m}"])
    check(out[1], model([x])[0])
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_weighted", 1, 64,
              [f32(x), f32(np.zeros(8 * n)), f32(np.zeros(n)), f32(w),
               f"i32:{m}"])
    expected = (2 * x.reshape(n, 8) * weights * w[:, None]).ravel()
    check(out[1], expected)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("m", [2, 4])
def test_local_array_in_a_loop_body(tmp_path, opt, m):
    """float acc[4] = {} at the top of a runtime loop's body (the zeroing
    loop first in the outer loop's header block gave invalid SPIR-V)."""
    ll = compile_cuda(tmp_path, "local_arrays", opt)
    rows, threads = 3, 64
    x = RNG.uniform(-1, 1, rows * threads * 4)
    acc = x.reshape(rows * threads, 4) * (np.arange(4) < m)
    out = run(tmp_path, ll, "row_sums", 1, threads,
              [f32(x), f32(np.zeros(rows * threads)), f"i32:{rows}",
               f"i32:{m}"])
    check(out[1], acc @ np.arange(1, 5))


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_struct_copies(tmp_path, opt):
    """Structs built, copied whole into a local array and out (llvm.memcpy,
    llvm.memset of the padding)."""
    ll = compile_cuda(tmp_path, "local_arrays", opt)
    n = 64
    x = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "copy_samples", 1, 64,
              [f32(x), f32(np.zeros(8 * n))])
    expected = np.zeros((n, 8))
    expected[:, 0], expected[:, 1] = x, 2 * x
    check(out[1].reshape(n, 8), expected)


@needs_cuda_headers
@pytest.mark.parametrize("negate", [0, 1])
def test_bool_parameter(tmp_path, negate):
    """A bool kernel parameter is a byte at launch (it was an i1 storage
    buffer SPIR-V rejects: cuda-samples' Mandelbrot)."""
    ll = compile_cuda(tmp_path, "bool_parameter", 2)
    x = RNG.uniform(-1, 1, 100)
    out = run(tmp_path, ll, "pick", 2, 64,
              [f32(x), f32(np.zeros(100)), f"i8:{negate}", "i32:100"])
    check(out[1], -x if negate else x)


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("with_bias", [True, False])
def test_optional_buffer_null_test(tmp_path, opt, with_bias):
    """`if (bias != NULL)` of a kernel parameter: the launch passes a buffer
    or null (`--arg=null`), and the kernel takes the branch CUDA would."""
    ll = compile_cuda(tmp_path, "optional_bias", opt)
    rows, cols, outs = 37, 19, 6
    inp = RNG.uniform(-1, 1, (rows, cols))
    weight = RNG.uniform(-1, 1, (outs, cols))
    bias = RNG.uniform(-1, 1, outs)
    out = run(tmp_path, ll, "matmul_bias_forward", "3,2", "16,4",
              [f32(np.zeros(rows * outs)), f32(inp.ravel()),
               f32(weight.ravel()), f32(bias) if with_bias else "null",
               f"i32:{rows}", f"i32:{cols}", f"i32:{outs}"])
    expected = inp @ weight.T + (bias if with_bias else 0)
    check(out[0], expected.ravel())


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("present", [(True, True), (True, False),
                                     (False, True), (False, False)])
def test_optional_buffers_in_a_device_function(tmp_path, opt, present):
    """Null tests in a device function that a kernel and an Enzyme request
    call: each passes whether its pointer is null, forward and gradient."""
    ll = compile_cuda(tmp_path, "optional_bias", opt)
    n = 150
    x, scale, bias = (RNG.uniform(-1, 1, n) for _ in range(3))
    has_scale, has_bias = present
    s = scale if has_scale else np.ones(n)
    b = bias if has_bias else np.zeros(n)
    maybe = lambda a, there: f32(a) if there else "null"
    out = run(tmp_path, ll, "affine_square_kernel", 3, 64,
              [f32(x), maybe(scale, has_scale), maybe(bias, has_bias),
               f32(np.zeros(n)), f"i32:{n}"])
    check(out[3], x * x * s + b)
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_affine_square", 3, 64,
              [f32(x), f32(np.zeros(n)), maybe(scale, has_scale),
               maybe(np.zeros(n), has_scale), maybe(bias, has_bias),
               maybe(np.zeros(n), has_bias), f32(np.zeros(n)), f32(dy),
               f"i32:{n}"])
    check(out[1], 2 * x * s * dy)
    if has_scale:
        check(out[3], x * x * dy)
    if has_bias:
        check(out[5], dy)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_unused_parameters_of_a_request(tmp_path, opt):
    """Pointers the differentiated function never touches (an int mask, a
    void* workspace) are dropped from its raised signature: the request
    binds buffers of any dtype for them, left as they were."""
    ll = compile_cuda(tmp_path, "optional_bias", opt)
    n = 100
    x = RNG.uniform(-2, 2, n)
    dy = RNG.standard_normal(n)
    mask = np.arange(7, dtype=np.int32)
    workspace = np.arange(5, dtype=np.uint8)
    out = run(tmp_path, ll, "grad_gelu_inplace", 2, 64,
              [f32(x), f32(dy), mask, workspace, f"i32:{n}"])
    c = 0.7978845608
    t = np.tanh(c * (x + 0.044715 * x ** 3))
    y = 0.5 * x * (1 + t)
    dydx = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)
    check(out[0], y)
    check(out[1], dydx * dy)
    np.testing.assert_array_equal(out[2], mask)
    np.testing.assert_array_equal(out[3], workspace)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_rounding_mode_conversions(tmp_path, opt):
    """__float2int_rd/ru/rn/rz (libdevice's __nv_float2int_*) round as named,
    ties to even included; the float path through them differentiates (the
    rounded value's derivative is zero)."""
    ll = compile_cuda(tmp_path, "rounding_conversions", opt)
    x = np.array([2.5, -2.5, 3.5, -0.4, 7.0, 1.2, -1.7, 0.5] * 8)
    n = len(x)
    out = run(tmp_path, ll, "quantize_kernel", 1, 64,
              [f32(x), np.zeros(4 * n, np.int32), f32(np.zeros(n)),
               f"i32:{n}"])
    expected = np.stack([np.floor(x), np.ceil(x), np.round(x), np.trunc(x)],
                        axis=1).ravel()
    np.testing.assert_array_equal(out[1], expected.astype(np.int32))
    check(out[2], x * x + np.floor(x))
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_quantize", 1, 64,
              [f32(x), f32(np.zeros(n)), np.zeros(4 * n, np.int32),
               f32(np.zeros(n)), f32(dy), f"i32:{n}"])
    check(out[1], 2 * x * dy)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_wrapping_atomic_counters_and_compaction(tmp_path, opt):
    """atomicInc/atomicDec wrap at their bound (every ticket taken once per
    lap); stream compaction by atomicInc slots, whose gradient reads each
    element's slot from the forward sweep."""
    ll = compile_cuda(tmp_path, "atomic_counters", opt)
    threads, bound = 128, 9
    out = run(tmp_path, ll, "tickets", 2, 64,
              [np.array([0, 0], np.uint32), np.zeros(threads, np.uint32),
               np.zeros(threads, np.uint32), f"i32:{bound}"])
    laps = np.arange(threads) % (bound + 1)
    np.testing.assert_array_equal(np.sort(out[1]), np.sort(laps))
    # atomicDec from 0: bound, bound - 1, ..., 0, bound, ...
    np.testing.assert_array_equal(np.sort(out[2]),
                                  np.sort((-np.arange(threads)) % (bound + 1)))
    np.testing.assert_array_equal(out[0], [threads % (bound + 1),
                                           (-threads) % (bound + 1)])
    n = 100
    x = RNG.uniform(-1, 1, n)
    kept = x > 0
    out = run(tmp_path, ll, "compact_kernel", 2, 64,
              [f32(x), f32(np.zeros(n)), np.zeros(1, np.uint32), f"i32:{n}"])
    assert out[2][0] == kept.sum()
    check(np.sort(out[1][:kept.sum()]), np.sort(x[kept] ** 2))
    dout = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_compact", 2, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(dout),
               np.zeros(1, np.uint32), f"i32:{n}"])
    # Each kept element's slot is where its value landed in the output.
    written = out[2][:kept.sum()]
    expected = np.zeros(n)
    for i in np.flatnonzero(kept):
        slot = np.argmin(np.abs(written - x[i] ** 2))
        expected[i] = 2 * x[i] * dout[slot]
    check(out[1], expected)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_overlapping_memmove(tmp_path, opt):
    """llvm.memmove within one buffer, to a later and to an earlier place:
    the copy's direction keeps overlapping ranges right; the gradient goes
    through the moves."""
    ll = compile_cuda(tmp_path, "memmove_rows", opt)
    n = 20
    a = RNG.uniform(-1, 1, 8 * n)
    b = RNG.uniform(-1, 1, 8 * n)

    def model(inputs):
        a, b = inputs
        rows = a.reshape(n, 8) ** 2
        right = rows.copy()
        right[:, 1:] = rows[:, :7]
        left = b.reshape(n, 8).copy()
        left[:, :7] = b.reshape(n, 8)[:, 1:]
        left[:, 7] = right[:, 0]
        return [right.reshape(-1), left.reshape(-1)]

    out = run(tmp_path, ll, "shift_kernel", 1, 32,
              [f32(a), f32(b), f"i32:{n}"])
    expected = model([a, b])
    check(out[0], expected[0])
    check(out[1], expected[1])
    wa, wb = RNG.standard_normal(8 * n), RNG.standard_normal(8 * n)
    out = run(tmp_path, ll, "grad_shift", 1, 32,
              [f32(a), f32(wa), f32(b), f32(wb), f"i32:{n}"])
    da, db = finite_differences(model, [a, b], [wa, wb])
    check(out[1], da)
    check(out[3], db)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_thread_fences(tmp_path, opt):
    """__threadfence() publishing per-block partials to the block that draws
    the last atomicInc ticket (several blocks, the counter reset for the next
    launch); __threadfence_block() inside a differentiated function; a
    device-scope fence in a differentiated function a located error."""
    ll = compile_cuda(tmp_path, "thread_fences", opt)
    n, blocks = 250, 4
    x = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "sum_all", blocks, 64,
              [f32(x), f32(np.zeros(blocks)), f32(np.zeros(1)),
               np.zeros(1, np.uint32), f"i32:{n}"])
    check(out[2], [x.sum()])
    check(out[1], [x[b * 64:(b + 1) * 64].sum() for b in range(blocks)])
    assert out[3][0] == 0
    out = run(tmp_path, ll, "fenced_square_kernel", blocks, 64,
              [f32(x), f32(np.zeros(n)), f"i32:{n}"])
    check(out[1], 3 * x * x + x)
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_fenced_square", blocks, 64,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(dy),
               f"i32:{n}"])
    check(out[1], (6 * x + 1) * dy)
    np.save(tmp_path / "x.npy", f32(np.zeros(64)))
    ll = compile_cuda(tmp_path, "thread_fence_refused", opt)
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll),
         f"--kernel={mangled(ll, 'grad_published_square')}", "--grid=1",
         "--block=64", f"--arg={tmp_path / 'x.npy'}",
         f"--arg={tmp_path / 'x.npy'}", f"--arg={tmp_path / 'x.npy'}",
         f"--arg={tmp_path / 'x.npy'}", "--arg=i32:64"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    # Located in the IR clang wrote (no debug information asked for).
    assert re.search(r"thread_fence_refused\.O\d\.ll:\d+:\d+: error: "
                     r"'nabla\.memory_fence' "
                     r"op cannot be differentiated in reverse mode: a "
                     r"device-scope fence", result.stderr), result.stderr
    # The last block to arrive reading every block's partial: the ticket's
    # atomic is named, and the code it guards.
    np.save(tmp_path / "c.npy", np.zeros(1, np.uint32))
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll),
         f"--kernel={mangled(ll, 'grad_last_block_sum')}", "--grid=2",
         "--block=64"] + [f"--arg={tmp_path / 'x.npy'}"] * 4
        + [f"--arg={tmp_path / 'c.npy'}"] + [f"--arg={tmp_path / 'x.npy'}"] * 2
        + ["--arg=i32:64"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "takes a ticket that decides which block runs code reading what " \
        "other blocks wrote" in result.stderr, result.stderr
    assert "the code the ticket guards" in result.stderr, result.stderr


def warp_mix_model(x):
    """warp_sync.cu: y = s'[lane + 1] + x^2 with s' = x^2[lane ^ 1] * x^2,
    per warp of 32."""
    v = (x * x).reshape(-1, 32)
    lanes = np.arange(32)
    product = v[:, lanes ^ 1] * v
    return (product[:, (lanes + 1) % 32] + v).ravel()


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("block", [32, 128, 256])
def test_syncwarp_exchange(tmp_path, opt, block):
    """__syncwarp orders a warp's shared-memory exchange, forward and in the
    reverse sweep (the adjoints lanes add to their partners' slots are read
    after the mirrored barrier)."""
    ll = compile_cuda(tmp_path, "warp_sync", opt)
    n = 2 * block
    x = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "warp_mix_kernel", 2, block,
              [f32(x), f32(np.zeros(n)), f"i32:{n}"])
    check(out[1], warp_mix_model(x))
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_warp_mix", 2, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w), f"i32:{n}"])
    (dx,) = finite_differences(lambda v: [warp_mix_model(v[0])], [x], [w])
    check(out[1], dx)


def block_max_shift_model(x, block):
    """cas_atomics.cu: y = x - max over x's block."""
    y = np.empty_like(x)
    for start in range(0, len(x), block):
        part = x[start:start + block]
        y[start:start + block] = part - part.max()
    return y


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_compare_exchange_float_atomics(tmp_path, opt):
    """atomicMax on floats and atomicAdd on doubles written as atomicCAS
    loops run as the atomics they implement, and differentiate: the block
    max's cotangent goes to its arg-max thread, the sum's to every term."""
    ll = compile_cuda(tmp_path, "cas_atomics", opt)
    n, block = 200, 128
    x = RNG.uniform(-5, 5, n)
    out = run(tmp_path, ll, "shift_kernel", 2, block,
              [f32(x), f32(np.zeros(n)), f"i32:{n}"])
    check(out[1], block_max_shift_model(x, block))
    w = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_shift", 2, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w), f"i32:{n}"])
    (dx,) = finite_differences(lambda v: [block_max_shift_model(v[0], block)],
                               [x], [w])
    check(out[1], dx)
    # The min, its loop written with the first attempt before it.
    out = run(tmp_path, ll, "shift_min_kernel", 2, block,
              [f32(x), f32(np.zeros(n)), f"i32:{n}"])
    check(out[1], -block_max_shift_model(-x, block))
    out = run(tmp_path, ll, "grad_shift_min", 2, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(w), f"i32:{n}"])
    (dx,) = finite_differences(
        lambda v: [-block_max_shift_model(-v[0], block)], [x], [w])
    check(out[1], dx)
    xd = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "sum_squares_kernel", 2, block,
              [xd, np.zeros(1), f"i32:{n}"])
    np.testing.assert_allclose(out[1], [np.sum(xd * xd)], rtol=1e-12)
    out = run(tmp_path, ll, "grad_sum_squares", 2, block,
              [xd, np.zeros(n), np.zeros(1), np.full(1, 0.5), f"i32:{n}"])
    np.testing.assert_allclose(out[1], 2 * xd * 0.5, rtol=1e-12)


SOURCES = ["lane_redundant", "float_bits", "float_bits_f64",
           "causal_softmax_grad", "cache_hints", "warp_votes",
           "control_flow_shapes", "dynamic_shared", "type_punning",
           "half_precision", "local_arrays", "bool_parameter",
           "memmove_rows", "warp_sync", "cas_atomics", "optional_bias",
           "struct_args", "local_pointer_args", "object_select",
           "dynamic_shared_grad", "llm_kernels", "loop_buffers",
           "rounding_conversions", "atomic_counters", "thread_fences",
           "shuffle_broadcast", "block_reduce", "partial_masks",
           "mixed_precision", "inplace_linear"]
PRIMAL_ONLY = ["causal_softmax_grad", "control_flow_shapes", "dynamic_shared",
               "type_punning", "half_precision", "bool_parameter"]
# SPIR-V and Metal compile the launch's dynamic shared memory in.
DYNAMIC_SHARED = {"dynamic_shared": 256, "dynamic_shared_grad": 256,
                  "block_reduce": 256}
F64_SOURCES = ["float_bits_f64", "cas_atomics"]


@needs_cuda_headers
@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv", "metal"])
def test_compiles_for_every_target(tmp_path, target):
    """Every production-idiom file at -O1/-O2/-O3 for one target; SPIR-V
    validated by spirv-val, NVVM assembled by ptxas."""
    for source in SOURCES:
        for opt in OPTS:
            ll = compile_cuda(tmp_path, source, opt)
            result, manifest = compile_for_target(
                ll, target, tmp_path / f"{source}-O{opt}-{target}",
                extra=[f"--dynamic-shared-memory={DYNAMIC_SHARED[source]}"]
                if source in DYNAMIC_SHARED and target in ("spirv", "metal")
                else [])
            if target == "metal" and source in F64_SOURCES:
                # Metal has no double: a located error, not a crash.
                assert result.returncode == 1, result.stderr
                assert re.search(r"\.ll:\d+:\d+: error: .* uses f64, which "
                                 r"the metal target does not support",
                                 result.stderr), result.stderr
                continue
            assert manifest, f"{source} -O{opt}: {result.stderr}"
            names = [k["name"] for k in manifest["kernels"]]
            assert source in PRIMAL_ONLY or any("grad" in n for n in names), (
                names)
