# Forward kernels of LLM training code written the way production CUDA
# writes them (frontends/llm_kernels.cu: an integer-indexed embedding
# gather, a warp-per-row layernorm with cooperative groups reductions and
# float4 reads, a warp-per-row online softmax merging (max, sum) pairs by
# shuffles, a float4-tiled shared-memory matmul), compiled by clang-22 at
# -O1/-O2/-O3: the primal against float64 NumPy and each Enzyme request's
# gradient against the closed form or central finite differences, on the
# default device (lavapipe).
import numpy as np
import pytest

from frontend_helpers import (check, compile_cuda, f32, finite_differences,
                              needs_cuda_headers, run)

RNG = np.random.default_rng(2026)
OPTS = [1, 2, 3]

pytestmark = needs_cuda_headers


def i32(x):
    return np.asarray(x, dtype=np.int32)


@pytest.mark.parametrize("opt", OPTS)
def test_encoder_gather(tmp_path, opt):
    """out[bt] = wte[tokens[bt]] + wpe[bt % T]: the gradient scatters dout
    into the rows of wte the tokens name (repeated tokens accumulate)."""
    ll = compile_cuda(tmp_path, "llm_kernels", opt)
    B, T, C, V = 2, 5, 12, 7
    BT = B * T
    tokens = RNG.integers(0, V, BT)
    tokens[3] = tokens[0]  # a repeated token
    wte = RNG.uniform(-1, 1, (V, C))
    wpe = RNG.uniform(-1, 1, (T, C))
    args = [f32(np.zeros(BT * C)), i32(tokens), f32(wte.ravel()),
            f32(wpe.ravel()), f"i32:{BT}", f"i32:{T}", f"i32:{C}"]
    out = run(tmp_path, ll, "encoder_kernel", 2, 64, args)
    expected = wte[tokens] + wpe[np.arange(BT) % T]
    check(out[0], expected.ravel())
    dout = RNG.standard_normal((BT, C))
    out = run(tmp_path, ll, "grad_encoder", 2, 64,
              [f32(np.zeros(BT * C)), f32(dout.ravel()), i32(tokens),
               f32(wte.ravel()), f32(np.zeros(V * C)), f32(wpe.ravel()),
               f32(np.zeros(T * C)), f"i32:{BT}", f"i32:{T}", f"i32:{C}"])
    dwte = np.zeros((V, C))
    np.add.at(dwte, tokens, dout)
    dwpe = np.zeros((T, C))
    np.add.at(dwpe, np.arange(BT) % T, dout)
    check(out[4], dwte.ravel())
    check(out[6], dwpe.ravel())


def layernorm_model(x, w, b, C):
    rows = x.reshape(-1, C)
    mean = rows.mean(axis=1, keepdims=True)
    var = ((rows - mean) ** 2).mean(axis=1, keepdims=True)
    return (((rows - mean) / np.sqrt(var + 1e-5)) * w + b).ravel()


@pytest.mark.parametrize("opt", OPTS)
def test_layernorm_warp_per_row(tmp_path, opt):
    """One warp per row (two per block, the last block half idle): mean and
    variance by cg::reduce over float4 reads; gradients of the input, the
    weight and the bias."""
    ll = compile_cuda(tmp_path, "llm_kernels", opt)
    N, C = 5, 64
    x = RNG.uniform(-2, 2, N * C)
    w, b = RNG.uniform(0.5, 1.5, C), RNG.uniform(-1, 1, C)
    out = run(tmp_path, ll, "layernorm_kernel", 3, 64,
              [f32(np.zeros(N * C)), f32(x), f32(w), f32(b), f"i32:{N}",
               f"i32:{C}"])
    check(out[0], layernorm_model(x, w, b, C))
    dout = RNG.standard_normal(N * C)
    out = run(tmp_path, ll, "grad_layernorm", 3, 64,
              [f32(np.zeros(N * C)), f32(dout), f32(x), f32(np.zeros(N * C)),
               f32(w), f32(np.zeros(C)), f32(b), f32(np.zeros(C)),
               f"i32:{N}", f"i32:{C}"])
    dx, dw, db = finite_differences(
        lambda v: [layernorm_model(v[0], v[1], v[2], C)], [x, w, b], [dout])
    check(out[3], dx, rtol=5e-3, atol=1e-3)
    check(out[5], dw)
    check(out[7], db)


def softmax_model(x, C):
    rows = x.reshape(-1, C)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).ravel()


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("C", [50, 7])
def test_online_softmax(tmp_path, opt, C):
    """Each lane's running (max, sum of exponentials) merged across the warp
    with __shfl_xor_sync; rows wider and narrower than a warp (lanes with
    no element keep (-inf, 0))."""
    ll = compile_cuda(tmp_path, "llm_kernels", opt)
    N = 3
    x = RNG.uniform(-3, 3, N * C)
    out = run(tmp_path, ll, "online_softmax_kernel", 2, 64,
              [f32(np.zeros(N * C)), f32(x), f"i32:{N}", f"i32:{C}"])
    check(out[0], softmax_model(x, C))
    dout = RNG.standard_normal(N * C)
    out = run(tmp_path, ll, "grad_online_softmax", 2, 64,
              [f32(np.zeros(N * C)), f32(dout), f32(x),
               f32(np.zeros(N * C)), f"i32:{N}", f"i32:{C}"])
    (dx,) = finite_differences(lambda v: [softmax_model(v[0], C)], [x],
                               [dout])
    check(out[3], dx)


@pytest.mark.parametrize("opt", OPTS)
def test_tiled_matmul_float4(tmp_path, opt):
    """16x16 shared tiles loaded as float4, a partial last row of tiles:
    C = A B with a run-time K; dA = dC B^T, dB = A^T dC through the request
    for K = 48 (a template parameter, as production kernels fix it)."""
    ll = compile_cuda(tmp_path, "llm_kernels", opt)
    M, N, K = 20, 32, 48
    A = RNG.uniform(-1, 1, (M, K))
    B = RNG.uniform(-1, 1, (K, N))
    grid = f"{N // 16},{-(-M // 16)}"
    out = run(tmp_path, ll, "matmul_kernel", grid, 64,
              [f32(np.zeros(M * N)), f32(A.ravel()), f32(B.ravel()),
               f"i32:{M}", f"i32:{N}", f"i32:{K}"])
    check(out[0], (A @ B).ravel())
    dC = RNG.standard_normal((M, N))
    out = run(tmp_path, ll, "grad_matmul_k48", grid, 64,
              [f32(np.zeros(M * N)), f32(dC.ravel()), f32(A.ravel()),
               f32(np.zeros(M * K)), f32(B.ravel()), f32(np.zeros(K * N)),
               f"i32:{M}", f"i32:{N}"])
    check(out[3], (dC @ B.T).ravel())
    check(out[5], (A.T @ dC).ravel())


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("K", [0, 16, 48, 160])
def test_tiled_matmul_runtime_k_gradient(tmp_path, opt, K):
    """The tiled matmul's gradient with a run-time K: the loop overwrites
    the shared tiles it reads, so its checkpoints hold the tiles (zero trips,
    one, three, and ten: more steps than snapshots)."""
    ll = compile_cuda(tmp_path, "llm_kernels", opt)
    M, N = 20, 32
    A = RNG.uniform(-1, 1, (M, K))
    B = RNG.uniform(-1, 1, (K, N))
    dC = RNG.standard_normal((M, N))
    out = run(tmp_path, ll, "grad_matmul", f"{N // 16},{-(-M // 16)}", 64,
              [f32(np.zeros(M * N)), f32(dC.ravel()), f32(A.ravel()),
               f32(np.zeros(M * K)), f32(B.ravel()), f32(np.zeros(K * N)),
               f"i32:{M}", f"i32:{N}", f"i32:{K}"])
    check(out[3], (dC @ B.T).ravel())
    check(out[5], (A.T @ dC).ravel())
