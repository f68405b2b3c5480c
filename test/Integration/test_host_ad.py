# ===- test_host_ad.py - Host-level AD through the command line ---------=== #
#
# The host programs of host_ad/ carry @grad (nabla.autodiff of @program) and
# @tangent (nabla.fwddiff): nabla-run --entry=grad with .npy arguments gives
# the analytic gradient, frees every device allocation it made
# (NABLA_MGPU_REPORT_LEAKS=1) and leaves the program's final state in the
# dup buffers; --arg-sets runs one compiled program for many argument sets;
# bad entry arguments are errors with messages. Finite differences of every
# program are in python/tests/test_host_grad.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import re
import subprocess

import numpy as np
import pytest

from frontend_helpers import linked_lists

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "host_ad")


def nabla_run(program, *args, env=None):
    return subprocess.run([os.path.join(BIN, "nabla-run"),
                           os.path.join(PROGRAMS, program), *args],
                          capture_output=True, text=True, timeout=300,
                          env=env)


def save(tmp_path, name, array):
    path = str(tmp_path / f"{name}.npy")
    np.save(path, array)
    return f"--arg={path}"


def test_gradient_of_a_chain_frees_everything(tmp_path):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(70).astype(np.float32)
    w = rng.standard_normal(70).astype(np.float32)
    zeros = np.zeros(70, np.float32)
    env = dict(os.environ, NABLA_MGPU_REPORT_LEAKS="1")
    r = nabla_run("chain.mlir", "--entry=grad",
                  save(tmp_path, "x", x), save(tmp_path, "dx", zeros),
                  save(tmp_path, "w", w), save(tmp_path, "dw", zeros),
                  save(tmp_path, "loss", np.zeros(1, np.float32)),
                  save(tmp_path, "dloss", np.ones(1, np.float32)),
                  f"--out={tmp_path / 'out'}", env=env)
    assert r.returncode == 0, r.stderr
    assert "not freed" not in r.stderr
    out = [np.load(tmp_path / "out" / f"arg{k}.npy") for k in range(6)]
    t = np.tanh(x.astype(np.float64) * w)
    np.testing.assert_allclose(out[1], w * (1 - t * t), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out[3], x * (1 - t * t), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out[4], [t.sum()], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(out[5], [0.0])


def test_overwritten_buffers_and_copies(tmp_path):
    # out = (x^2 + ... ) see overwrite.mlir: h = x^2, y = exp(h), keep = h,
    # h = y * reverse(x), out = h * keep.
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(16) * 0.5).astype(np.float32)
    seed = rng.standard_normal(16).astype(np.float32)
    env = dict(os.environ, NABLA_MGPU_REPORT_LEAKS="1")
    r = nabla_run("overwrite.mlir", "--entry=grad",
                  save(tmp_path, "x", x),
                  save(tmp_path, "dx", np.zeros(16, np.float32)),
                  save(tmp_path, "out", np.zeros(16, np.float32)),
                  save(tmp_path, "dout", seed),
                  f"--out={tmp_path / 'out'}", env=env)
    assert r.returncode == 0, r.stderr
    assert "not freed" not in r.stderr
    dx = np.load(tmp_path / "out" / "arg1.npy")
    out = np.load(tmp_path / "out" / "arg2.npy")
    xd = x.astype(np.float64)
    h0 = xd * xd
    y = np.exp(h0)
    h1 = y * xd[::-1]
    np.testing.assert_allclose(out, h1 * h0, rtol=1e-5)
    # d out_i = seed_i: dh1 = seed * h0, dkeep = seed * h1.
    dh1, dkeep = seed * h0, seed * h1
    dy = dh1 * xd[::-1]
    dxr = (dh1 * y)[::-1]
    dh0 = dkeep + dy * y
    want = dxr + dh0 * 2 * xd
    np.testing.assert_allclose(dx, want, rtol=1e-4, atol=1e-5)


def test_arg_sets_run_one_compiled_program(tmp_path):
    lines = []
    for k in range(3):
        x = np.full(8, k + 1, np.float32)
        w = np.full(8, 0.5, np.float32)
        lines.append(" ".join(s[len("--arg="):] for s in (
            save(tmp_path, f"x{k}", x), save(tmp_path, f"w{k}", w),
            save(tmp_path, f"l{k}", np.zeros(1, np.float32)))))
    sets = tmp_path / "sets.txt"
    sets.write_text("\n".join(lines) + "\n")
    r = nabla_run("chain.mlir", "--entry=program", f"--arg-sets={sets}",
                  f"--out={tmp_path / 'out'}")
    assert r.returncode == 0, r.stderr
    for k in range(3):
        loss = np.load(tmp_path / "out" / str(k) / "arg2.npy")
        np.testing.assert_allclose(loss, [8 * np.tanh(0.5 * (k + 1))],
                                   rtol=1e-5)


@pytest.mark.parametrize("make, message", [
    (lambda p: [save(p, "x", np.zeros(8, np.float32))],
     "entry 'program' takes 3 arguments, got 1"),
    (lambda p: [save(p, "x", np.zeros(8, np.int32)),
                save(p, "w", np.zeros(8, np.float32)),
                save(p, "l", np.zeros(1, np.float32))],
     "holds i4 elements, the parameter f32"),
    (lambda p: [save(p, "x", np.zeros(8, np.float32)),
                save(p, "w", np.zeros(8, np.float32)),
                save(p, "l", np.zeros(2, np.float32))],
     "does not match memref<1xf32>"),
    (lambda p: [save(p, "x", np.zeros(8, np.float32)),
                save(p, "w", np.zeros(8, np.float32)), "--arg=f32:1.0"],
     "expects a .npy file for memref<1xf32>"),
])
def test_bad_entry_arguments_are_errors(tmp_path, make, message):
    r = nabla_run("chain.mlir", "--entry=program", *make(tmp_path))
    assert r.returncode == 1, r.stderr
    assert message in r.stderr


def test_scalar_entry_argument_must_match_its_type(tmp_path):
    args = [save(tmp_path, "x", np.zeros(16, np.float32)),
            save(tmp_path, "y", np.zeros(16, np.float32))]
    r = nabla_run("launch_region.mlir", "--entry=program", *args,
                  "--arg=f32:1")
    assert r.returncode == 1
    assert "expects 'i32:VALUE', got 'f32:1'" in r.stderr
    r = nabla_run("launch_region.mlir", "--entry=program", *args, "--arg=i32:1")
    assert r.returncode == 0, r.stderr


def test_arg_and_arg_sets_are_exclusive(tmp_path):
    sets = tmp_path / "sets.txt"
    sets.write_text("\n")
    r = nabla_run("chain.mlir", "--entry=program", "--arg=f32:1",
                  f"--arg-sets={sets}")
    assert r.returncode == 2
    assert "either --arg or --arg-sets" in r.stderr


def test_host_program_tape_over_the_limit_is_refused(tmp_path):
    """The host code checks the tape it is about to allocate against the
    limit (--max-tape-bytes, $NABLA_MAX_TAPE_BYTES): over it, the program
    ends before the allocation and the launch, naming the kernel, the bytes
    it needed and the formula."""
    rows, cols = 5, 1000
    x = np.ones(rows * cols, np.float32)
    args = [save(tmp_path, "x", x), save(tmp_path, "dx", x),
            f"--arg=index:{rows}", f"--arg=index:{cols}"]
    env = dict(os.environ, NABLA_MGPU_REPORT_LEAKS="1")
    r = nabla_run("normalize_rows.mlir", "--entry=grad", *args,
                  "--max-tape-bytes=4096", env=env)
    assert r.returncode == 1, r.stderr
    assert re.search(r"nabla_mgpu: error: kernel '\w+' needs a global-memory "
                     r"tape of \d+ bytes \(4 \* \(.*\) per thread\), over "
                     r"the limit of 4096 bytes", r.stderr), r.stderr
    # The same through the environment; a limit it fits runs.
    r = nabla_run("normalize_rows.mlir", "--entry=grad", *args,
                  env=dict(env, NABLA_MAX_TAPE_BYTES="4096"))
    assert r.returncode == 1 and "over the limit of 4096" in r.stderr
    r = nabla_run("normalize_rows.mlir", "--entry=grad", *args,
                  "--max-tape-bytes=100000000", env=env)
    assert r.returncode == 0, r.stderr
    r = nabla_run("normalize_rows.mlir", "--entry=grad", *args,
                  "--max-tape-bytes=lots")
    assert r.returncode == 2 and "malformed --max-tape-bytes" in r.stderr


@pytest.mark.parametrize("cols", [0, 1, 7, 1000])
def test_adjoint_kernel_with_a_global_tape(tmp_path, cols):
    """normalize_rows.mlir: the adjoint kernel tapes a loop of run-time
    length in global memory; the host code allocates the tape around the
    launch from the launch's own operands and frees it."""
    rng = np.random.default_rng(11)
    rows = 5
    x = rng.uniform(0.5, 1.5, rows * cols).astype(np.float32)
    seed = rng.standard_normal(rows * cols).astype(np.float32)
    env = dict(os.environ, NABLA_MGPU_REPORT_LEAKS="1")
    r = nabla_run("normalize_rows.mlir", "--entry=grad",
                  save(tmp_path, "x", x), save(tmp_path, "dx", seed),
                  f"--arg=index:{rows}", f"--arg=index:{cols}",
                  f"--out={tmp_path / 'out'}", env=env)
    assert r.returncode == 0, r.stderr
    assert "not freed" not in r.stderr
    if not cols:
        return
    dx = np.load(tmp_path / "out" / "arg1.npy").reshape(rows, cols)
    x64 = x.astype(np.float64).reshape(rows, cols)
    dy = seed.astype(np.float64).reshape(rows, cols)
    s = (x64 ** 2).sum(axis=1, keepdims=True)
    expected = dy / s - 2 * x64 * (dy * x64).sum(axis=1, keepdims=True) / s ** 2
    np.testing.assert_allclose(dx, expected, rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("lengths", [[3, 0, 1, 9, 2, 25], [0], [1000, 1]])
def test_ragged_rows_sized_from_offsets(tmp_path, lengths):
    """ragged_rows.mlir: the row lengths are in an offsets buffer, so the
    adjoint's global tape is sized from it; the host code reads a host copy
    for every thread of the launch (8 threads, fewer rows: the threads past
    the last row need no slots)."""
    rng = np.random.default_rng(12)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    n = max(int(offsets[-1]), 1)
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)
    seed = rng.standard_normal(n).astype(np.float32)
    env = dict(os.environ, NABLA_MGPU_REPORT_LEAKS="1")
    r = nabla_run("ragged_rows.mlir", "--entry=grad",
                  save(tmp_path, "x", x), save(tmp_path, "dx", seed),
                  save(tmp_path, "offsets", offsets),
                  f"--arg=index:{len(lengths)}", f"--out={tmp_path / 'out'}",
                  env=env)
    assert r.returncode == 0, r.stderr
    assert "not freed" not in r.stderr
    dx = np.load(tmp_path / "out" / "arg1.npy")
    expected = seed.astype(np.float64)
    for a, b in zip(offsets[:-1], offsets[1:]):
        if b > a:
            v = x[a:b].astype(np.float64)
            dy = seed[a:b].astype(np.float64)
            s = (v ** 2).sum()
            expected[a:b] = dy / s - 2 * v * (dy * v).sum() / s ** 2
    np.testing.assert_allclose(dx, expected, rtol=2e-3, atol=1e-4)
    # The longest row decides the size: a cap under it is refused.
    if max(lengths) >= 1000:
        r = nabla_run("ragged_rows.mlir", "--entry=grad",
                      save(tmp_path, "x", x), save(tmp_path, "dx", seed),
                      save(tmp_path, "offsets", offsets),
                      f"--arg=index:{len(lengths)}", "--max-tape-bytes=4096",
                      env=env)
        assert r.returncode == 1, r.stderr
        assert "over the limit of 4096 bytes" in r.stderr, r.stderr


def walk_lists(x, head, successor):
    """y[first] = x[first], y[i] = x[i] x[previous]; the VJP of dy."""
    y = x.astype(np.float64).copy()
    for first in head:
        carry, i = 1.0, int(first)
        while i >= 0:
            v = y[i]
            y[i] = v * carry
            carry, i = v, int(successor[i])
    return y


@pytest.mark.parametrize("lengths", [[5, 0, 31], [40, 2]])
def test_growing_tape_in_a_host_program(tmp_path, lengths):
    """linked_lists.mlir: a while loop's growing tape in a host program. Up
    to 31 nodes (32 steps) fit the default capacity; a list of 40 ends the
    program with the capacity it needed, and NABLA_TAPE_CAPACITY=41 runs it.
    The gradient against central differences of the float64 walk."""
    rng = np.random.default_rng(21)
    n = sum(lengths)
    head, successor = linked_lists(lengths, rng)
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)
    seed = rng.standard_normal(n).astype(np.float32)
    args = [save(tmp_path, "x", x), save(tmp_path, "dx", seed),
            save(tmp_path, "head", head), save(tmp_path, "next", successor),
            f"--arg=index:{len(lengths)}", f"--out={tmp_path / 'out'}"]
    env = dict(os.environ, NABLA_MGPU_REPORT_LEAKS="1")
    env.pop("NABLA_TAPE_CAPACITY", None)
    r = nabla_run("linked_lists.mlir", "--entry=grad", *args, env=env)
    if max(lengths) > 31:
        assert r.returncode == 1, r.stderr
        assert "needed a growing global-memory tape of 41 slots" in r.stderr
        assert "NABLA_TAPE_CAPACITY=41" in r.stderr, r.stderr
        r = nabla_run("linked_lists.mlir", "--entry=grad", *args,
                      env=dict(env, NABLA_TAPE_CAPACITY="41"))
    assert r.returncode == 0, r.stderr
    assert "not freed" not in r.stderr
    dx = np.load(tmp_path / "out" / "arg1.npy")
    x64 = x.astype(np.float64)
    expected = np.zeros(n)
    h = 1e-6
    for j in range(n):
        plus, minus = x64.copy(), x64.copy()
        plus[j] += h
        minus[j] -= h
        expected[j] = np.dot(walk_lists(plus, head, successor) -
                             walk_lists(minus, head, successor),
                             seed) / (2 * h)
    np.testing.assert_allclose(dx, expected, rtol=2e-3, atol=1e-4)
