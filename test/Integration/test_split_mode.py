# Split mode (nabla.kernel_adjoint ... reverse ...): the augmented forward
# kernel runs the primal and writes a caller-owned tape; the reverse kernel,
# launched later in another process with an unrelated kernel run in
# between, reads it and gives the combined adjoint's gradients. The tape's
# size follows the manifest's formula; a smaller one is refused naming the
# size. Trip counts 0, 1, 7, 1000 of the row loop (taped in global memory).
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import json
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "split",
                       "normalize_rows.mlir")
ROWS, THREADS = 5, 8


def launch(tmp_path, kernel, args, tag, extra=()):
    """nabla-run PROGRAM --kernel=kernel; buffers from .npy, outputs back."""
    work = tmp_path / tag
    work.mkdir()
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(work / f"in{k}.npy", arg)
            specs.append(f"--arg={work / f'in{k}.npy'}")
        else:
            specs.append(f"--arg={arg}")
    r = subprocess.run([os.path.join(BIN, "nabla-run"), PROGRAM,
                        f"--kernel={kernel}", "--grid=1",
                        f"--block={THREADS}", f"--out={work / 'out'}"] +
                       specs + list(extra),
                       capture_output=True, text=True, timeout=300)
    return r, {k: np.load(work / "out" / f"arg{k}.npy")
               for k, a in enumerate(args) if isinstance(a, np.ndarray)
               and r.returncode == 0}


def tape_words(tmp_path, cols):
    """The tape's words per thread from the manifest's formula (3 words per
    row element: two for the loops' loaded values, one for the row's sum
    inside; plus the fixed loop's and the scalars' words)."""
    out = tmp_path / "compiled"
    r = subprocess.run([os.path.join(BIN, "nabla-compile"), "--no-cache",
                        "--target=spirv", "-o", str(out), PROGRAM],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    kernels = {k["name"]: k for k in manifest["kernels"]}
    fwd, rev = kernels["grad_fwd"], kernels["grad_rev"]
    assert fwd["split_tape"]["words_per_thread"] == \
        rev["split_tape"]["words_per_thread"]
    assert fwd["params"][fwd["split_tape"]["param"]]["split_tape"] is True
    assert "tape" not in fwd and "tape" not in rev
    return fwd["split_tape"]["formula"]


@pytest.mark.parametrize("cols", [0, 1, 7, 1000])
def test_split_equals_combined(tmp_path, cols):
    rng = np.random.default_rng(cols)
    x = rng.uniform(0.5, 1.5, ROWS * cols).astype(np.float32)
    dx = rng.standard_normal(ROWS * cols).astype(np.float32)
    dy = rng.standard_normal(THREADS).astype(np.float32)
    y = np.zeros(THREADS, np.float32)
    scalars = [f"index:{ROWS}", f"index:{cols}"]
    r, combined = launch(tmp_path, "grad", [x, dx, y, dy] + scalars, "combined")
    assert r.returncode == 0, r.stderr

    # The augmented forward with a tape too small is refused, naming the
    # size; then with the size it named.
    small = np.zeros(1, np.int32)
    r, _ = launch(tmp_path, "grad_fwd", [x, dx, y, dy] + scalars + [small],
                  "small")
    assert r.returncode == 1
    assert "needs a split-mode tape (parameter #6) of" in r.stderr
    needed = int(r.stderr.split("split-mode tape (parameter #6) of ")[1]
                 .split(" ")[0])
    tape = np.zeros(needed, np.int32)
    r, forward = launch(tmp_path, "grad_fwd", [x, dx, y, dy] + scalars + [tape],
                        "forward")
    assert r.returncode == 0, r.stderr
    # The primal's results, and the shadows untouched.
    np.testing.assert_allclose(forward[0], combined[0], rtol=1e-6)
    np.testing.assert_allclose(forward[2], combined[2], rtol=1e-6)
    np.testing.assert_array_equal(forward[1], dx)
    np.testing.assert_array_equal(forward[3], dy)

    # Other work in between: another kernel, another process.
    r, _ = launch(tmp_path, "unrelated", [np.ones(THREADS, np.float32)],
                  "between")
    assert r.returncode == 0, r.stderr

    r, reverse = launch(tmp_path, "grad_rev",
                        [forward[0], dx, forward[2], dy] + scalars +
                        [forward[6]], "reverse")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(reverse[1], combined[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reverse[3], combined[3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reverse[0], combined[0], rtol=1e-6)

    # The analytic gradient: y = g(s), s = sum x^2, x <- x / s.
    if cols:
        x64 = x.astype(np.float64).reshape(ROWS, cols)
        s = (x64 ** 2).sum(axis=1)

        def g(a):
            for _ in range(3):
                a = a + 0.5 * np.sin(a)
            return a

        h = 1e-6
        dg = (g(s + h) - g(s - h)) / (2 * h)
        d = dx.astype(np.float64).reshape(ROWS, cols)
        ds = -(d * x64).sum(axis=1) / s ** 2 + dy[:ROWS] * dg
        expected = d / s[:, None] + 2 * x64 * ds[:, None]
        np.testing.assert_allclose(reverse[1].reshape(ROWS, cols), expected,
                                   rtol=2e-3, atol=1e-4)


def test_manifest_formula_is_shared(tmp_path):
    formula = tape_words(tmp_path, 7)
    assert "arg5" in formula


def test_private_window_split_equals_combined(tmp_path):
    """A private array the kernel fills and reads: the reverse makes its
    shadow again, zeroed; d/dx sum(exp(x)^2) = 2 exp(2x) dy."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, 4 * THREADS).astype(np.float32)
    dx = np.zeros_like(x)
    y = np.zeros(THREADS, np.float32)
    dy = rng.standard_normal(THREADS).astype(np.float32)
    r, combined = launch(tmp_path, "window_grad", [x, dx, y, dy], "combined")
    assert r.returncode == 0, r.stderr
    r, _ = launch(tmp_path, "window_fwd", [x, dx, y, dy, np.zeros(1, np.int32)],
                  "small")
    needed = int(r.stderr.split("split-mode tape (parameter #4) of ")[1]
                 .split(" ")[0])
    r, forward = launch(tmp_path, "window_fwd",
                        [x, dx, y, dy, np.zeros(needed, np.int32)], "forward")
    assert r.returncode == 0, r.stderr
    r, reverse = launch(tmp_path, "window_rev",
                        [forward[0], dx, forward[2], dy, forward[4]],
                        "reverse")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(reverse[1], combined[1], rtol=1e-6, atol=1e-7)
    expected = 2 * np.exp(2 * x.astype(np.float64)) * np.repeat(dy, 4)
    np.testing.assert_allclose(reverse[1], expected, rtol=1e-4, atol=1e-6)


@pytest.mark.skipif(not os.path.isdir("/usr/local/cuda/include"),
                    reason="clang's CUDA mode needs the CUDA toolkit headers")
@pytest.mark.parametrize("opt", [1, 2])
def test_enzyme_split_calls_from_cuda(tmp_path, opt):
    """frontends/enzyme_split.cu: __enzyme_augmentsize gives the bytes per
    thread, __enzyme_augmentfwd writes each thread's region of a byte tape,
    __enzyme_reverse (another launch, another process) reads it: the
    gradients equal __enzyme_autodiff's."""
    from frontend_helpers import compile_cuda, mangled, run_named
    ll = compile_cuda(tmp_path, "enzyme_split", opt)
    n, threads, width = 10, 16, 6
    out = run_named(tmp_path, ll, mangled(ll, "window_tape_bytes"), 1, 1,
                    [np.zeros(1, np.uint64)])
    per_thread = int(out[0][0])
    # The loaded values, the sum, the scaled values' operands: a few
    # words per window element, all known at compile time.
    assert 4 * width <= per_thread <= 4 * 8 * width, per_thread
    rng = np.random.default_rng(opt)
    x = rng.uniform(0.5, 1.5, threads * width).astype(np.float32)
    dx = rng.standard_normal(threads * width).astype(np.float32)
    y = np.zeros(threads, np.float32)
    dy = rng.standard_normal(threads).astype(np.float32)
    combined = run_named(tmp_path, ll, mangled(ll, "window_combined"), 2, 8,
                         [x, dx, y, dy, f"i32:{n}"])
    tape = np.zeros(threads * per_thread, np.int8)
    forward = run_named(tmp_path, ll, mangled(ll, "window_forward"), 2, 8,
                        [x, dx, y, dy, f"i32:{n}", tape,
                         f"i64:{per_thread}"])
    np.testing.assert_allclose(forward[0], combined[0], rtol=1e-6)
    np.testing.assert_allclose(forward[2], combined[2], rtol=1e-6)
    np.testing.assert_array_equal(forward[1], dx)
    reverse = run_named(tmp_path, ll, mangled(ll, "window_reverse"), 2, 8,
                        [forward[0], dx, forward[2], dy, f"i32:{n}",
                         forward[5], f"i64:{per_thread}"])
    np.testing.assert_allclose(reverse[1], combined[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reverse[3], combined[3], rtol=1e-5, atol=1e-6)
    # Threads past n leave their shadows alone.
    np.testing.assert_array_equal(reverse[1][n * width:], dx[n * width:])


MATMUL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "split",
                      "tiled_matmul.mlir")


@pytest.mark.parametrize("n", [16, 48])
def test_tiled_matmul_split_equals_combined(tmp_path, n):
    """Workgroup tiles and barriers in a run-time loop: the split halves give
    the combined adjoint's shadows (to rounding: blocks accumulate with
    atomics in any order), and both the analytic ones."""
    def run(kernel, arrays, tag):
        work = tmp_path / tag
        work.mkdir()
        specs = []
        for k, a in enumerate(arrays):
            np.save(work / f"in{k}.npy", a)
            specs.append(f"--arg={work / f'in{k}.npy'}")
        r = subprocess.run(
            [os.path.join(BIN, "nabla-run"), MATMUL, f"--kernel={kernel}",
             f"--grid={n // 16},{n // 16}", "--block=16,16",
             f"--out={work / 'out'}"] + specs[:6] + [f"--arg=index:{n}"] +
            specs[6:], capture_output=True, text=True, timeout=300)
        return r, [np.load(work / "out" / f"arg{k}.npy")
                   for k in range(len(arrays) + 1) if k != 6
                   and r.returncode == 0]

    rng = np.random.default_rng(n)
    A = rng.uniform(-1, 1, n * n).astype(np.float32)
    B = rng.uniform(-1, 1, n * n).astype(np.float32)
    dC = rng.standard_normal(n * n).astype(np.float32)
    z = np.zeros(n * n, np.float32)
    r, combined = run("matmul_adjoint", [A, z, B, z, z, dC], "combined")
    assert r.returncode == 0, r.stderr
    r, _ = run("matmul_fwd", [A, z, B, z, z, dC, np.zeros(1, np.int32)],
               "small")
    assert r.returncode == 1
    needed = int(r.stderr.split("of ")[1].split(" int32")[0])
    # 100 words per thread at n = 16: the K loop's accumulator and loaded
    # values (2) plus the inner loop's 16 x 3 per tile step.
    assert needed == (2 + 48) * (n // 16) * n * n
    r, forward = run("matmul_fwd",
                     [A, z, B, z, z, dC, np.zeros(needed, np.int32)], "fwd")
    assert r.returncode == 0, r.stderr
    r, reverse = run("matmul_rev", [forward[0], z, forward[2], z, forward[4],
                                    dC, forward[6]], "rev")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(reverse[1], combined[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reverse[3], combined[3], rtol=1e-5, atol=1e-6)
    a, b, d = (m.astype(np.float64).reshape(n, n) for m in (A, B, dC))
    np.testing.assert_allclose(combined[1], (d @ b.T).ravel(), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(combined[3], (a.T @ d).ravel(), rtol=1e-4,
                               atol=1e-5)


HOST_STEP = """
  func.func @train_step(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>,
                        %rows: index, %cols: index) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %n = nabla.split_tape_elements @kernels::@grad_fwd blocks in (%c1, %c1, %c1)
        threads in (%c8, %c1, %c1) args(%x, %dx, %y, %dy, %rows, %cols
        : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index, index) : index
    %tape = gpu.alloc (%n) : memref<?xi32>
    gpu.launch_func @kernels::@grad_fwd blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<?xf32>, %dx : memref<?xf32>, %y : memref<?xf32>, %dy : memref<?xf32>,
             %rows : index, %cols : index, %tape : memref<?xi32>)
    gpu.launch_func @kernels::@grad_rev blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<?xf32>, %dx : memref<?xf32>, %y : memref<?xf32>, %dy : memref<?xf32>,
             %rows : index, %cols : index, %tape : memref<?xi32>)
    gpu.dealloc %tape : memref<?xi32>
    return
  }
"""


def test_host_program_sizes_the_split_tape(tmp_path):
    """A frontend's two steps: nabla-differentiate makes the split kernels,
    then host code that sizes one tape with nabla.split_tape_elements,
    launches the augmented forward and the reverse with it, and frees it:
    the combined adjoint's gradients, nothing leaked."""
    cols = 7
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, ROWS * cols).astype(np.float32)
    dx = rng.standard_normal(ROWS * cols).astype(np.float32)
    dy = rng.standard_normal(THREADS).astype(np.float32)
    y = np.zeros(THREADS, np.float32)
    r, combined = launch(tmp_path, "grad", [x, dx, y, dy, f"index:{ROWS}",
                                            f"index:{cols}"], "combined")
    assert r.returncode == 0, r.stderr
    r = subprocess.run([os.path.join(BIN, "nabla-opt"), PROGRAM,
                        "--nabla-differentiate"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    text = r.stdout.rstrip()
    program = tmp_path / "program.mlir"
    program.write_text(text[:text.rindex("}")] + HOST_STEP + "}\n")
    specs = []
    for k, a in enumerate([x, dx, y, dy]):
        np.save(tmp_path / f"h{k}.npy", a)
        specs.append(f"--arg={tmp_path / f'h{k}.npy'}")
    env = dict(os.environ, NABLA_MGPU_REPORT_LEAKS="1")
    r = subprocess.run([os.path.join(BIN, "nabla-run"), str(program),
                        "--entry=train_step"] + specs +
                       [f"--arg=index:{ROWS}", f"--arg=index:{cols}",
                        f"--out={tmp_path / 'host'}"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "not freed" not in r.stderr
    for k in (0, 1, 3):
        np.testing.assert_allclose(np.load(tmp_path / "host" / f"arg{k}.npy"),
                                   combined[k], rtol=1e-5, atol=1e-6)
