# Loops with run-time trip counts that read memory which they, later code or
# an enclosing loop overwrite (frontends/global_tapes.cu): reverse mode keeps
# their values in a global-memory tape that the launch sizes from the
# kernel's arguments and allocates (the user passes nothing). Gradients of
# clang-22's IR at -O1/-O2 against closed forms or float64 central finite
# differences on the default device, at trip counts 0, 1, 7 and 1000; the
# manifest's formula against the kernel's arguments; a launch over
# --max-tape-bytes refused with the size it needed.
import json
import os
import subprocess

import numpy as np
import pytest

from frontend_helpers import (BIN, check, compile_cuda, compile_for_target,
                              f32, finite_differences, linked_lists, mangled,
                              needs_cuda_headers, run)

RNG = np.random.default_rng(47)
OPTS = [1, 2]

pytestmark = needs_cuda_headers


def softmax_rows_vjp(x, dy):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    s = e / e.sum(axis=1, keepdims=True)
    return s * (dy - (s * dy).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("cols", [0, 1, 7, 1000])
def test_softmax_rows_in_place(tmp_path, opt, cols):
    """row[j] = exp(row[j] - max); row[j] /= sum: three passes over a row of
    run-time length, the last two overwriting what they read."""
    ll = compile_cuda(tmp_path, "global_tapes", opt)
    rows = 5
    x = RNG.uniform(-2, 2, (rows, cols))
    dy = RNG.standard_normal((rows, cols))
    out = run(tmp_path, ll, "grad_softmax_rows", 1, 8,
              [f32(x.ravel()), f32(dy.ravel()), f"i32:{rows}", f"i32:{cols}"])
    if cols:
        check(out[1].reshape(rows, cols), softmax_rows_vjp(x, dy))


def ragged(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


def ragged_softmax_vjp(x, dy, offsets):
    dx = np.zeros_like(x)
    for a, b in zip(offsets[:-1], offsets[1:]):
        if b > a:
            dx[a:b] = softmax_rows_vjp(x[None, a:b], dy[None, a:b])[0]
    return dx


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("lengths,grid,block", [
    ([3, 0, 1, 7, 2, 40, 5], 2, 4),   # a thread past the last row
    ([0, 0], 1, 8), ([1], 1, 1), ([1000, 7], 1, 2),
    (list(RNG.integers(0, 30, 50)), 2, 32)])
def test_ragged_rows_read_their_lengths(tmp_path, opt, lengths, grid, block):
    """A loop whose bounds are in memory (`offsets[row] .. offsets[row +
    1]`) and that overwrites what it read: the tape's size is read from the
    offsets buffer, by the launcher for every thread (the manifest's formula
    loads it) and by the kernel where its primal reads it."""
    ll = compile_cuda(tmp_path, "ragged_rows", opt)
    offsets = ragged(lengths)
    n = max(int(offsets[-1]), 1)
    rows = len(lengths)
    x = RNG.uniform(-2, 2, n)
    out = run(tmp_path, ll, "ragged_softmax_kernel", grid, block,
              [f32(x), offsets, f"i32:{rows}"])
    expected = x.copy()
    for a, b in zip(offsets[:-1], offsets[1:]):
        if b > a:
            e = np.exp(x[a:b] - x[a:b].max())
            expected[a:b] = e / e.sum()
    check(out[0], expected, rtol=1e-5, atol=1e-6)
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_ragged_softmax", grid, block,
              [f32(x), f32(dy), offsets, f"i32:{rows}"])
    check(out[1], np.where(np.arange(n) < offsets[-1],
                           ragged_softmax_vjp(x, dy, offsets), dy),
          rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opt", OPTS)
def test_csr_rows_against_finite_differences(tmp_path, opt):
    """A CSR matrix's rows scaled in place by a weighted norm (the weight
    gathered through the column indices): values and weights against float64
    central differences."""
    ll = compile_cuda(tmp_path, "ragged_rows", opt)
    lengths = [2, 0, 5, 1, 3]
    rowptr = ragged(lengths)
    nnz, ncols = int(rowptr[-1]), 4
    cols = RNG.integers(0, ncols, nnz).astype(np.int32)
    values = RNG.uniform(-1, 1, nnz)
    weight = RNG.uniform(0.5, 1.5, ncols)
    seed = RNG.standard_normal(nnz)

    def model(inputs):
        v, w = inputs
        out = v.copy()
        for r in range(len(lengths)):
            a, b = rowptr[r], rowptr[r + 1]
            norm = (v[a:b] ** 2 * w[cols[a:b]]).sum()
            out[a:b] = np.tanh(v[a:b] / np.sqrt(norm + 1e-3))
        return [out]

    dv, dw = finite_differences(model, [values, weight], [seed])
    out = run(tmp_path, ll, "grad_normalize_csr", 1, 8,
              [f32(values), f32(seed), rowptr, cols, f32(weight),
               f32(np.zeros(ncols)), f"i32:{len(lengths)}"])
    check(out[1], dv, rtol=2e-3, atol=1e-4)
    check(out[5], dw, rtol=2e-3, atol=1e-4)


def test_ragged_tape_formula_and_cap(tmp_path):
    """The manifest's formula reads the offsets (`arg2[...]`); nabla-launch
    (no MLIR linked) evaluates it from the launch's buffer, and a cap under
    the longest row's need is refused naming the bytes."""
    ll = compile_cuda(tmp_path, "ragged_rows", 2)
    result, manifest = compile_for_target(ll, "spirv",
                                          tmp_path / "compiled", block=4,
                                          extra=["--no-cache"])
    assert manifest, result.stderr
    kernel = mangled(ll, "grad_ragged_softmax")
    entry = next(k for k in manifest["kernels"] if k["name"] == kernel)
    assert "arg2[" in entry["tape"]["formula"], entry["tape"]["formula"]
    assert '"load"' in json.dumps(entry["tape"]["words_per_thread"])
    offsets = ragged([4, 100, 2])
    x = f32(RNG.uniform(-1, 1, 106))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "dy.npy", f32(RNG.standard_normal(106)))
    np.save(tmp_path / "offsets.npy", offsets)
    base = [os.path.join(BIN, "nabla-launch"), str(tmp_path / "compiled"),
            f"--kernel={kernel}", "--grid=1", "--block=4",
            f"--arg={tmp_path / 'x.npy'}", f"--arg={tmp_path / 'dy.npy'}",
            f"--arg={tmp_path / 'offsets.npy'}", "--arg=i32:3",
            f"--out={tmp_path / 'out'}"]
    result = subprocess.run(base, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    check(np.load(tmp_path / "out" / "arg1.npy"),
          ragged_softmax_vjp(x.astype(np.float64),
                             np.load(tmp_path / "dy.npy").astype(np.float64),
                             offsets), rtol=1e-4, atol=1e-5)
    # The longest row (100 elements, 8 words each) over 4 threads: more than
    # 4096 bytes.
    result = subprocess.run(base + ["--max-tape-bytes=4096"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "needs a global-memory tape of" in result.stderr, result.stderr
    assert "over the limit of 4096 bytes" in result.stderr, result.stderr


def causal_model(q, k, T, C):
    q, k = q.reshape(T, C), k.reshape(T, C)
    att = np.zeros((T, T))
    for t in range(T):
        s = (q[t] @ k[: t + 1].T) ** 2
        att[t, : t + 1] = s / (1 + s.sum())
    return att.ravel()


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("T", [1, 7, 33])
def test_attention_scores_scaled_in_place(tmp_path, opt, T):
    """att[t2] *= inv over t2 <= t: a trip count that differs per thread; the
    tape has the longest thread's height (the launcher's maximum over the
    grid)."""
    ll = compile_cuda(tmp_path, "global_tapes", opt)
    C = 3
    q = RNG.uniform(-1, 1, T * C)
    k = RNG.uniform(-1, 1, T * C)
    datt = RNG.standard_normal(T * T)
    out = run(tmp_path, ll, "grad_causal_scores", 2, 32,
              [f32(q), f32(np.zeros(T * C)), f32(k), f32(np.zeros(T * C)),
               f32(np.zeros(T * T)), f32(datt), f"i32:{T}", f"i32:{C}"])
    dq, dk = finite_differences(lambda v: [causal_model(v[0], v[1], T, C)],
                                [q, k], [datt])
    check(out[1], dq)
    check(out[3], dk)
    check(out[4], causal_model(q, k, T, C), rtol=1e-4, atol=1e-5)


def indexed_model(state, w, idx, m, width, n):
    s = state.reshape(n, width).copy()
    for k in range(m):
        j = idx[k]
        s[:, j] = s[:, j] * w[k] + np.sin(s[:, j])
    return s.ravel()


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("m", [0, 1, 7, 1000])
def test_indexed_read_modify_write(tmp_path, opt, m):
    """s[idx[k]] = s[idx[k]] * w[k] + sin(s[idx[k]]) with repeated indices."""
    ll = compile_cuda(tmp_path, "global_tapes", opt)
    width, n = 4, 6
    state = RNG.uniform(-1, 1, n * width)
    w = RNG.uniform(0.5, 0.99, max(m, 1))
    idx = RNG.integers(0, width, max(m, 1)).astype(np.int32)
    ds = RNG.standard_normal(n * width)
    out = run(tmp_path, ll, "grad_indexed_updates", 1, 8,
              [f32(state), f32(ds), f32(w), f32(np.zeros_like(w)), idx,
               f"i32:{m}", f"i32:{width}", f"i32:{n}"])
    check(out[0], indexed_model(state, w, idx, m, width, n), rtol=1e-4,
          atol=1e-4)
    if m <= 7:
        dstate, dw = finite_differences(
            lambda v: [indexed_model(v[0], v[1], idx, m, width, n)],
            [state, w], [ds])
        check(out[1], dstate)
        check(out[3], dw)
    else:
        assert np.all(np.isfinite(out[1])) and np.all(np.isfinite(out[3]))


def test_manifest_declares_the_tape(tmp_path):
    """The gradient kernel's last parameter is the tape, not the user's; the
    manifest's words per thread follow the trip count (2 words per update:
    the loaded value and the counter)."""
    ll = compile_cuda(tmp_path, "global_tapes", 2)
    out = tmp_path / "compiled"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-compile"), "--no-cache", "--target=spirv",
         "-o", str(out), str(ll)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    kernel = next(k for k in manifest["kernels"]
                  if k["name"] == mangled(ll, "grad_indexed_updates"))
    tape = kernel["tape"]
    assert tape["param"] == len(kernel["params"]) - 1
    assert kernel["params"][tape["param"]].get("tape") is True
    assert "arg5" in tape["formula"]
    primal = [k for k in manifest["kernels"] if "tape" in k]
    assert all(not k["name"].startswith("_Z15indexed") for k in primal)


def test_launch_over_the_tape_limit_is_refused(tmp_path):
    """A tape larger than --max-tape-bytes fails before the launch, naming the
    bytes it needed."""
    ll = compile_cuda(tmp_path, "global_tapes", 2)
    m, width, n = 1000, 4, 6
    args = [f32(np.zeros(n * width)), f32(np.zeros(n * width)),
            f32(np.ones(m)), f32(np.zeros(m)),
            np.zeros(m, np.int32), f"i32:{m}", f"i32:{width}", f"i32:{n}"]
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(tmp_path / f"a{k}.npy", arg)
            specs.append(f"--arg={tmp_path / f'a{k}.npy'}")
        else:
            specs.append(f"--arg={arg}")
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll),
         f"--kernel={mangled(ll, 'grad_indexed_updates')}", "--grid=1",
         "--block=8", "--max-tape-bytes=4096", f"--out={tmp_path}"] + specs,
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    # 2 words per update, 1000 updates, 8 threads.
    assert "needs a global-memory tape of 64000 bytes" in result.stderr
    assert "over the limit of 4096 bytes" in result.stderr


def matmul_model(A, B, n, K):
    return (A.reshape(n, K) @ B.reshape(K, n)).ravel()


@pytest.mark.parametrize("K", [0, 1, 7, 100])
def test_tiled_matmul_runtime_k(tmp_path, K):
    """8 x 8 __shared__ tiles overwritten every iteration of a run-time K
    loop (the snapshots hold the tiles)."""
    ll = compile_cuda(tmp_path, "global_tapes", 2)
    n = 9
    A = RNG.uniform(-1, 1, n * K)
    B = RNG.uniform(-1, 1, K * n)
    dC = RNG.standard_normal(n * n)
    out = run(tmp_path, ll, "grad_tiled_matmul", "2,2", "8,8",
              [f32(A), f32(np.zeros(n * K)), f32(B), f32(np.zeros(K * n)),
               f32(np.zeros(n * n)), f32(dC), f"i32:{n}", f"i32:{K}"])
    if K:
        check(out[1], (dC.reshape(n, n) @ B.reshape(K, n).T).ravel())
        check(out[3], (A.reshape(n, K).T @ dC.reshape(n, n)).ravel())
    check(out[4], matmul_model(A, B, n, K), rtol=1e-4, atol=1e-5)


def reloaded_tile_model(X, steps, blocks, threads):
    Y = np.zeros(blocks * threads)
    for t in range(threads):
        acc = 0.0
        for k in range(steps):
            tile = X[k * 48:(k + 1) * 48]
            j = (t * 7 + k) % 48
            acc = 0.5 * acc + tile[j] * tile[(j + 1) % 48]
        Y[t::threads] = acc
    return Y


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("threads,steps", [(5, 3), (7, 1), (64, 4), (48, 0)])
def test_tile_reloaded_by_any_block(tmp_path, opt, threads, steps):
    """A 48-float __shared__ tile the block reloads every step of a run-time
    loop: every step's snapshot holds each thread's share of it (10 elements
    at 5 threads, the last share partly past the tile; 1 at 64, most threads
    none), restored before the step is reversed."""
    ll = compile_cuda(tmp_path, "global_tapes", opt)
    blocks = 2
    X = RNG.uniform(-1, 1, 48 * steps)
    dY = RNG.standard_normal(blocks * threads)
    out = run(tmp_path, ll, "grad_reloaded_tile", blocks, threads,
              [f32(X), f32(np.zeros(48 * steps)),
               f32(np.zeros(blocks * threads)), f32(dY), f"i32:{steps}"])
    (dX,) = finite_differences(
        lambda x: [reloaded_tile_model(x[0], steps, blocks, threads)], [X],
        [dY])
    check(out[1], dX)


def exp_attention_model(Q, K, V, O, l, heads, N, d):
    """O + exp(Q K^T) V and l + rowsum(exp(Q K^T)), per head."""
    q, k, v = (x.reshape(heads, N, d) for x in (Q, K, V))
    e = np.exp(q @ k.transpose(0, 2, 1))
    return [O + (e @ v).ravel(), l + e.sum(axis=2).ravel()]


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("N", [1, 7, 8, 20])
def test_tiles_left_early(tmp_path, opt, N):
    """Attention-style tiles whose loops `break` at the sequence end (while
    loops with two exits, made loops of their counted bound with the rest
    skipped) inside a loop that reloads shared K/V tiles: every loop is
    taped in global memory."""
    ll = compile_cuda(tmp_path, "global_tapes", opt)
    heads, d, tile = 2, 3, 8
    tiles = (N + tile - 1) // tile
    Q, K, V = (RNG.uniform(-1, 1, heads * N * d) for _ in range(3))
    O, l = RNG.uniform(-1, 1, heads * N * d), RNG.uniform(0, 1, heads * N)
    dO, dl = RNG.standard_normal(heads * N * d), RNG.standard_normal(heads * N)
    z = lambda x: f32(np.zeros_like(x))
    out = run(tmp_path, ll, "grad_tiled_exp_attention", heads, tile,
              [f32(Q), z(Q), f32(K), z(K), f32(V), z(V), f32(O), f32(dO),
               f32(l), f32(dl), f"i32:{N}", f"i32:{d}", f"i32:{tiles}",
               f"i32:{tiles}"])
    grads = finite_differences(
        lambda x: exp_attention_model(*x, heads, N, d), [Q, K, V, O, l],
        [dO, dl])
    for position, expected in zip([1, 3, 5, 7, 9], grads):
        check(out[position], expected)
    primal = exp_attention_model(Q, K, V, O, l, heads, N, d)
    check(out[6], primal[0], rtol=1e-4, atol=1e-5)
    check(out[8], primal[1], rtol=1e-4, atol=1e-5)


def causal_bwd_model(dx, dp, p, T):
    """dx[t, t3] = sum_{t2 <= t} p dp ([t2 == t3] - p[t3]) for t3 <= t."""
    dx, dp, p = (x.reshape(T, T).copy() for x in (dx, dp, p))
    lower = np.tril(np.ones((T, T), bool))
    a = np.where(lower, p * dp, 0.0)
    return [np.where(lower, a - p * a.sum(axis=1, keepdims=True), dx).ravel()]


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("T", [1, 7, 33, 70])
def test_shared_tile_per_block_step(tmp_path, opt, T):
    """A causal softmax backward in steps of the block size: a shared tile
    reloaded every `t2b <= t` step, read by a loop of min(t + 1 - t2b, 32)
    trips (taped by that bound), inside a loop over the row's blocks."""
    ll = compile_cuda(tmp_path, "global_tapes", opt)
    dx = RNG.uniform(-1, 1, T * T)
    dp = RNG.uniform(-1, 1, T * T)
    p = RNG.uniform(0, 1, T * T)
    seed = RNG.standard_normal(T * T)
    z = lambda x: f32(np.zeros_like(x))
    out = run(tmp_path, ll, "grad_causal_softmax_bwd_tiles", T, 32,
              [f32(dx), f32(seed), f32(dp), z(dp), f32(p), z(p),
               f"i32:{T}"])
    grads = finite_differences(lambda x: causal_bwd_model(*x, T),
                               [dx, dp, p], [seed])
    for position, expected in zip([1, 3, 5], grads):
        check(out[position], expected)
    check(out[0], causal_bwd_model(dx, dp, p, T)[0], rtol=1e-4, atol=1e-5)


def square_until_model(x, sums, rows, n, limit):
    x, sums = x.reshape(rows, n).copy(), sums.copy()
    for r in range(rows):
        s = 0.0
        for j in range(n):
            x[r, j] *= x[r, j]
            s += x[r, j]
            if s > limit:
                break
        sums[r] = s
    return [x.ravel(), sums]


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("n", [1, 7, 100])
def test_loop_left_at_a_data_dependent_point(tmp_path, opt, n):
    """A row squared in place until its running sum passes a limit: each
    thread leaves at its own iteration (the loop of the counted bound skips
    the rest; the tape keeps whether each iteration ran)."""
    ll = compile_cuda(tmp_path, "global_tapes", opt)
    rows, limit = 40, 3.0
    # Rows of squares summing well away from the limit at every prefix.
    x = RNG.uniform(0.5, 1.0, rows * n) * RNG.choice([-1, 1], rows * n)
    sums = np.zeros(rows)
    dx, dsums = RNG.standard_normal(rows * n), RNG.standard_normal(rows)
    out = run(tmp_path, ll, "grad_square_until", 2, 32,
              [f32(x), f32(dx), f32(sums), f32(dsums), f"i32:{rows}",
               f"i32:{n}", f"f32:{limit}"])
    primal = square_until_model(x, sums, rows, n, limit)
    grads = finite_differences(
        lambda v: square_until_model(v[0], v[1], rows, n, limit), [x, sums],
        [dx, dsums], h=1e-7)
    check(out[1], grads[0])
    check(out[3], grads[1])
    check(out[0], primal[0], rtol=1e-4, atol=1e-5)
    check(out[2], primal[1], rtol=1e-4, atol=1e-5)


def lower_systems(batch, n):
    """Well-conditioned lower-triangular matrices (junk above the diagonal,
    which the solve never reads) and right-hand sides."""
    L = RNG.uniform(-0.3, 0.3, (batch, n, n))
    idx = np.arange(n)
    L[:, idx, idx] = RNG.uniform(1.0, 2.0, (batch, n))
    return L, RNG.standard_normal((batch, n))


@pytest.mark.parametrize("opt", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 24])
def test_triangular_solve_in_place(tmp_path, opt, n):
    """Batched L y = b with y over b: the inner loop's bound is the outer
    loop's counter (`for (j = 0; j < i; j++)`), so its tape holds the
    largest trip count's slots per outer iteration; threads past the batch
    run nothing."""
    ll = compile_cuda(tmp_path, "triangular_solves", opt)
    batch = 5
    L, b = lower_systems(batch, n)
    Lt = np.tril(L)
    y = np.array([np.linalg.solve(Lt[k], b[k]) for k in range(batch)])
    out = run(tmp_path, ll, "trsv_lower_kernel", 1, 8,
              [f32(L.ravel()), f32(b.ravel()), f"i32:{n}", f"i32:{batch}"])
    if n:
        check(out[1].reshape(batch, n), y)
    dy = RNG.standard_normal((batch, n))
    out = run(tmp_path, ll, "grad_trsv_lower", 1, 8,
              [f32(L.ravel()), np.zeros(batch * n * n, np.float32),
               f32(b.ravel()), f32(dy.ravel()), f"i32:{n}", f"i32:{batch}"])
    if not n:
        return
    # y = L^-1 b: db = L^-T dy, dL = -tril(db y^T).
    db = np.array([np.linalg.solve(Lt[k].T, dy[k]) for k in range(batch)])
    dL = -np.tril(np.einsum("ki,kj->kij", db, y))
    check(out[2].reshape(batch, n), y)
    check(out[3].reshape(batch, n), db)
    check(out[1].reshape(batch, n, n), dL)


def cholesky_in_place(A):
    """The kernel's model in float64: the lower triangle becomes the factor,
    the upper one stays."""
    out = A.copy()
    for k in range(A.shape[0]):
        L = np.linalg.cholesky(A[k])
        lower = np.tril(np.ones_like(L, dtype=bool))
        out[k][lower] = L[lower]
    return out


@pytest.mark.parametrize("opt", [1, 2, 3])
@pytest.mark.parametrize("n", [1, 3, 6])
def test_cholesky_in_place(tmp_path, opt, n):
    """A three-deep triangular nest (`for j; for k < j` and `for i > j; for
    k < j`) factoring in place, against float64 central differences."""
    ll = compile_cuda(tmp_path, "triangular_solves", opt)
    batch = 3
    M = RNG.uniform(-1, 1, (batch, n, n))
    A = np.einsum("kij,klj->kil", M, M) + n * np.eye(n)
    out = run(tmp_path, ll, "cholesky_kernel", 1, 4,
              [f32(A.ravel()), f"i32:{n}", f"i32:{batch}"])
    check(out[0].reshape(batch, n, n), cholesky_in_place(A))
    dy = RNG.standard_normal((batch, n, n))
    out = run(tmp_path, ll, "grad_cholesky", 1, 4,
              [f32(A.ravel()), f32(dy.ravel()), f"i32:{n}", f"i32:{batch}"])
    # The kernel reads each element of the lower triangle once; the model's
    # finite differences perturb it there (the upper triangle only passes
    # through).
    def model(inputs):
        full = np.tril(inputs[0]) + np.transpose(np.tril(inputs[0], -1),
                                                 (0, 2, 1))
        result = cholesky_in_place(full)
        upper = ~np.tril(np.ones((n, n), dtype=bool))
        result[:, upper] = inputs[0][:, upper]
        return [result]
    (expected,) = finite_differences(model, [A.copy()], [dy])
    check(out[1].reshape(batch, n, n), expected, rtol=2e-3, atol=1e-3)


def relax_lists_model(x, head, successor):
    x = x.copy()
    for first in head:
        carry, i = 0.0, first
        while i >= 0:
            v = x[i]
            x[i] = v * 0.9 + np.tanh(carry)
            carry = v + x[i]
            i = successor[i]
    return x


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("lengths", [[0, 1, 7], [40, 3], [100, 0, 5, 33, 1]])
def test_linked_lists_in_place(tmp_path, opt, lengths):
    """A while loop whose trip count is the list's length (known only by
    walking it) and that overwrites the nodes it reads: a growing tape. The
    launch starts with 32 steps per thread; lists of 33, 40 and 100 nodes
    make it run again with what the longest needed."""
    ll = compile_cuda(tmp_path, "while_tapes", opt)
    head, successor = linked_lists(lengths, RNG)
    x = RNG.uniform(-1, 1, len(successor))
    lists = f"i32:{len(lengths)}"
    out = run(tmp_path, ll, "relax_lists_kernel", 1, 8,
              [f32(x), head, successor, lists])
    expected = relax_lists_model(x, head, successor)
    check(out[0], expected)
    dy = RNG.standard_normal(len(x))
    out = run(tmp_path, ll, "grad_relax_lists", 1, 8,
              [f32(x), f32(dy), head, successor, lists])
    (dx,) = finite_differences(
        lambda v: [relax_lists_model(v[0], head, successor)], [x], [dy])
    check(out[0], expected)
    check(out[1], dx)


def relax_passes_model(x, head, successor, passes):
    x = x.copy()
    for first in head:
        for p in range(passes):
            carry, i = 0.25 * p, first
            while i >= 0:
                v = x[i]
                x[i] = v * 0.9 + np.tanh(carry)
                carry = v + x[i]
                i = successor[i]
    return x


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("passes", [0, 1, 3])
def test_while_loop_inside_a_taped_loop(tmp_path, opt, passes):
    """Several passes over each list: the while loop sits in a loop taped in
    global memory, so its growing tape has the capacity's slots per pass,
    and its step count is taped per pass too (lists up to 40 nodes: the
    launch runs again with a larger capacity)."""
    ll = compile_cuda(tmp_path, "while_tapes", opt)
    head, successor = linked_lists([0, 6, 40, 1], RNG)
    x = RNG.uniform(-1, 1, len(successor))
    dy = RNG.standard_normal(len(x))
    out = run(tmp_path, ll, "grad_relax_lists_passes", 1, 8,
              [f32(x), f32(dy), head, successor, "i32:4", f"i32:{passes}"])
    model = lambda v: [relax_passes_model(v[0], head, successor, passes)]
    (dx,) = finite_differences(model, [x], [dy])
    check(out[0], model([x])[0])
    check(out[1], dx)


def relax_groups_model(x, head, next_group, first_member, next_member):
    x = x.copy()
    for first in head:
        carry, g = 0.0, first
        while g >= 0:
            i = first_member[g]
            while i >= 0:
                v = x[i]
                x[i] = v * 0.9 + np.tanh(carry)
                carry = 0.5 * (v + x[i])
                i = next_member[i]
            g = next_group[g]
    return x


@pytest.mark.parametrize("opt", OPTS)
def test_while_loop_inside_a_while_loop(tmp_path, opt):
    """Lists of groups, each a list of members, walked and updated in
    place: the inner while's growing tape has the capacity's slots per step
    of the outer one, whose own tape grows too (a group of 40 members, a
    thread of 35 groups: both past the first capacity)."""
    ll = compile_cuda(tmp_path, "while_tapes", opt)
    # Thread 0: groups of 2, 0 and 5 members; thread 1: one of 40; thread
    # 2: no group; thread 3: 35 groups of one member.
    groups = [[2, 0, 5], [40], [], [1] * 35]
    head = np.full(len(groups), -1, np.int32)
    sizes = [size for thread in groups for size in thread]
    first_member, next_member = linked_lists(sizes, RNG)
    next_group = np.full(len(sizes), -1, np.int32)
    g = 0
    for t, thread in enumerate(groups):
        if thread:
            head[t] = g
        for k in range(len(thread)):
            next_group[g + k] = g + k + 1 if k + 1 < len(thread) else -1
        g += len(thread)
    x = RNG.uniform(-1, 1, len(next_member))
    dy = RNG.standard_normal(len(x))
    args = [f32(x), f32(dy), head, next_group, first_member, next_member,
            f"i32:{len(groups)}"]
    out = run(tmp_path, ll, "grad_relax_groups", 1, 8, args)
    model = lambda v: [relax_groups_model(v[0], head, next_group,
                                          first_member, next_member)]
    (dx,) = finite_differences(model, [x], [dy])
    check(out[0], model([x])[0])
    check(out[1], dx)


def settle_model(x, tol):
    x = x.copy()
    for v in x:
        change = np.inf
        while change > tol:
            change = 0.0
            for k in range(4):
                new = 0.5 * v[k] + 0.25 * np.sin(v[(k + 1) & 3])
                change = max(change, abs(new - v[k]))
                v[k] = new
    return x


@pytest.mark.parametrize("opt", OPTS)
def test_fixed_point_until_settled(tmp_path, opt):
    """A row relaxed in place until its largest change is under `tol`: the
    exit depends on the float data (about 40 sweeps here, past the first
    capacity)."""
    ll = compile_cuda(tmp_path, "while_tapes", opt)
    rows, tol = 6, 1e-5
    x = RNG.uniform(-2, 2, (rows, 4))
    out = run(tmp_path, ll, "settle_rows_kernel", 1, 8,
              [f32(x.ravel()), f"f32:{tol}", f"i32:{rows}"])
    expected = settle_model(x, tol)
    check(out[0].reshape(rows, 4), expected, atol=1e-4)
    dy = RNG.standard_normal((rows, 4))
    out = run(tmp_path, ll, "grad_settle_rows", 1, 8,
              [f32(x.ravel()), f32(dy.ravel()), f"f32:{tol}", f"i32:{rows}"])
    (dx,) = finite_differences(lambda v: [settle_model(v[0], tol)], [x],
                               [dy])
    check(out[1].reshape(rows, 4), dx, atol=1e-3)


def drain_model(x, count):
    x = x.copy()
    for row, n in zip(x, count):
        for j in range(1, n):
            row[j] = row[j] * 0.5 + np.sin(row[j - 1])
    return x


@pytest.mark.parametrize("opt", OPTS)
def test_bound_read_from_memory_the_kernel_writes(tmp_path, opt):
    """`n = count[t]; for (j = 1; j < n; j++) row[j] = f(row[j], row[j -
    1]); count[t] = 0`: the bound is in memory the kernel clears, so no
    launcher computes it beforehand; the loop's tape grows like a while
    loop's (counts 0, 1, 2, 9 and 60, past the first capacity)."""
    ll = compile_cuda(tmp_path, "while_tapes", opt)
    count = np.array([0, 1, 2, 9, 60], np.int32)
    width = 64
    x = RNG.uniform(-1, 1, (len(count), width))
    dy = RNG.standard_normal(x.shape)
    out = run(tmp_path, ll, "grad_drain", 1, 8,
              [f32(x.ravel()), f32(dy.ravel()), count, f"i32:{width}",
               f"i32:{len(count)}"])
    (dx,) = finite_differences(lambda v: [drain_model(v[0], count)], [x],
                               [dy])
    check(out[0].reshape(x.shape), drain_model(x, count))
    check(out[1].reshape(x.shape), dx)
    np.testing.assert_array_equal(out[2], 0)


def test_growing_tape_capacity_and_cap(tmp_path):
    """The manifest marks the tape growing and its formula reads the
    capacity; NABLA_TAPE_CAPACITY sets the first try (1 here: every list
    longer than one node makes the launch run again, the gradients the
    same), and a cap under what the longest list needs is refused naming
    the bytes."""
    ll = compile_cuda(tmp_path, "while_tapes", 2)
    result, manifest = compile_for_target(ll, "spirv", tmp_path / "compiled",
                                          block=8, extra=["--no-cache"])
    assert manifest, result.stderr
    kernel = mangled(ll, "grad_relax_lists")
    entry = next(k for k in manifest["kernels"] if k["name"] == kernel)
    assert entry["tape"]["growable"] is True
    assert "capacity" in entry["tape"]["formula"], entry["tape"]
    head, successor = linked_lists([9, 2, 0], RNG)
    x = RNG.uniform(-1, 1, len(successor))
    dy = RNG.standard_normal(len(x))
    args = [f32(x), f32(dy), head, successor, "i32:3"]
    env = dict(os.environ, NABLA_TAPE_CAPACITY="1")
    (dx,) = finite_differences(
        lambda v: [relax_lists_model(v[0], head, successor)], [x], [dy])
    out = run(tmp_path, ll, "grad_relax_lists", 1, 8, args, env=env)
    check(out[1], dx)
    # Ten steps (nine nodes and the exit test) of 12 bytes for 8 threads.
    with pytest.raises(AssertionError, match="global-memory tape of"):
        run(tmp_path, ll, "grad_relax_lists", 1, 8, args,
            extra=["--max-tape-bytes=200"])


@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv", "metal"])
def test_compiles_for_every_target(tmp_path, target):
    """The global-tape and split-mode kernels at -O1 and -O2 for one target;
    SPIR-V validated by spirv-val, NVVM assembled by ptxas; the manifest
    declares the tape for every target."""
    for source in ["global_tapes", "enzyme_split", "ragged_rows",
                   "triangular_solves", "while_tapes"]:
        for opt in OPTS:
            ll = compile_cuda(tmp_path, source, opt)
            result, manifest = compile_for_target(
                ll, target, tmp_path / f"{source}-O{opt}-{target}",
                extra=["--no-cache"])
            assert manifest, f"{source} -O{opt}: {result.stderr}"
            if source == "global_tapes":
                taped = [k["name"] for k in manifest["kernels"] if "tape" in k]
                assert mangled(ll, "grad_softmax_rows") in taped, taped


def test_nabla_launch_allocates_the_tape(tmp_path):
    """nabla-launch (no MLIR linked) sizes the tape from the manifest's
    formula as nabla-run does."""
    ll = compile_cuda(tmp_path, "global_tapes", 2)
    compiled = tmp_path / "compiled"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-compile"), "--no-cache", "--target=spirv",
         "--block=8", "-o", str(compiled), str(ll)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows, cols = 5, 33
    x = RNG.uniform(-2, 2, (rows, cols))
    dy = RNG.standard_normal((rows, cols))
    np.save(tmp_path / "x.npy", f32(x.ravel()))
    np.save(tmp_path / "dy.npy", f32(dy.ravel()))
    result = subprocess.run(
        [os.path.join(BIN, "nabla-launch"), str(compiled),
         f"--kernel={mangled(ll, 'grad_softmax_rows')}", "--grid=1",
         "--block=8", f"--arg={tmp_path / 'x.npy'}",
         f"--arg={tmp_path / 'dy.npy'}", f"--arg=i32:{rows}",
         f"--arg=i32:{cols}", f"--out={tmp_path / 'out'}"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    got = np.load(tmp_path / "out" / "arg1.npy").reshape(rows, cols)
    check(got, softmax_rows_vjp(x, dy))


def test_nabla_launch_grows_the_tape(tmp_path):
    """nabla-launch runs a kernel with a growing tape again with the
    capacity its longest list needed, as nabla-run does; --repeat restores
    the inputs before each launch (the same gradient every time)."""
    ll = compile_cuda(tmp_path, "while_tapes", 2)
    compiled = tmp_path / "compiled"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-compile"), "--no-cache", "--target=spirv",
         "--block=8", "-o", str(compiled), str(ll)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    head, successor = linked_lists([70, 4, 0], RNG)
    x = RNG.uniform(-1, 1, len(successor))
    dy = RNG.standard_normal(len(x))
    for name, value in [("x", f32(x)), ("dy", f32(dy)), ("head", head),
                        ("next", successor)]:
        np.save(tmp_path / f"{name}.npy", value)
    (dx,) = finite_differences(
        lambda v: [relax_lists_model(v[0], head, successor)], [x], [dy])
    for repeat in ["1", "3"]:
        result = subprocess.run(
            [os.path.join(BIN, "nabla-launch"), str(compiled),
             f"--kernel={mangled(ll, 'grad_relax_lists')}", "--grid=1",
             "--block=8", f"--arg={tmp_path / 'x.npy'}",
             f"--arg={tmp_path / 'dy.npy'}", f"--arg={tmp_path / 'head.npy'}",
             f"--arg={tmp_path / 'next.npy'}", "--arg=i32:3",
             f"--repeat={repeat}", f"--out={tmp_path / ('out' + repeat)}"],
            capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        check(np.load(tmp_path / ("out" + repeat) / "arg1.npy"), dx)
