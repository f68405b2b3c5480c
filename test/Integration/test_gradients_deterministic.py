# ===- test_gradients_deterministic.py - Bit-identical kernel adjoints ---=== #
#
# Kernel adjoints with nabla.kernel_adjoint {deterministic} (gradients/
# deterministic.mlir, deterministic_f64.mlir) on the default device: adjoints
# every thread adds into one element are summed in a fixed order, so repeated
# launches give the same bits; the gradient matches the analytic one and the
# atomic adjoint to rounding, and one scratch buffer serves repeated launches.
# Helpers: gradient_helpers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import numpy as np

from gradient_helpers import BIN, KERNELS, RNG, launch


# Deterministic kernel adjoints (gradients/deterministic.mlir): the trailing
# scratch holds a counter and `nabla.scratch_words_per_block` words per block.
def scratch_words(kernel, blocks, name="deterministic.mlir"):
    out = subprocess.run([os.path.join(BIN, "nabla-opt"), "--nabla-differentiate",
                          os.path.join(KERNELS, name)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = next(l for l in out.stdout.splitlines() if f"gpu.func @{kernel}(" in l)
    words = int(line.split("nabla.scratch_words_per_block = ")[1].split(" ")[0])
    return 1 + words * blocks


def run_scale(tmp_path, kernel, X, W, seed, blocks, n, dtype, scratch=None,
              name="deterministic.mlir"):
    args = [X, np.zeros_like(X), W, np.zeros_like(W), np.zeros_like(X), seed,
            f"index:{n}"]
    if scratch is not None:
        args.append(scratch)
    out = launch(tmp_path, name, kernel, blocks, 256, args)
    return out


def test_deterministic_scale_bit_identical(tmp_path):
    # 64 blocks of 256 threads add w[0]'s and w[1]'s adjoints: ordered, every
    # launch gives the same bits (seeds of mixed magnitude make the order
    # visible); the atomic adjoint agrees up to rounding.
    blocks, n = 64, 64 * 256 - 5
    X = (RNG.standard_normal(n + 5) * 10.0 ** RNG.integers(-4, 4, n + 5)).astype(np.float32)
    W = np.array([0.7, -1.3], np.float32)
    seed = (RNG.standard_normal(n + 5) * 10.0 ** RNG.integers(-4, 4, n + 5)).astype(np.float32)
    scratch = np.zeros(scratch_words("scale_ordered", blocks), np.int32)
    runs = [run_scale(tmp_path / f"r{k}", "scale_ordered", X, W, seed, blocks, n,
                      np.float32, scratch) for k in range(3)]
    x, s = X[:n].astype(np.float64), seed[:n].astype(np.float64)
    expected = np.array([np.dot(s, x), s.sum()])
    for out in runs:
        np.testing.assert_allclose(out[3], expected, rtol=1e-4)
        np.testing.assert_allclose(out[1][:n], s * 0.7, rtol=1e-6)
        assert out[3].tobytes() == runs[0][3].tobytes()
        assert out[1].tobytes() == runs[0][1].tobytes()
        # The kernel leaves the counter at zero for the next launch.
        assert out[7][0] == 0
    atomic = run_scale(tmp_path / "atomic", "scale_atomic", X, W, seed, blocks, n,
                       np.float32)
    np.testing.assert_allclose(atomic[3], runs[0][3], rtol=1e-4)


def test_deterministic_scale_f64_and_reuse(tmp_path):
    # f64 partials take two scratch words; one scratch serves repeated
    # launches (the previous launch reset its counter).
    blocks, n = 16, 16 * 256
    X = RNG.standard_normal(n)
    W = np.array([1.5, 0.25])
    seed = RNG.standard_normal(n)
    f64 = "deterministic_f64.mlir"
    scratch = np.zeros(scratch_words("scale64_ordered", blocks, f64), np.int32)
    first = run_scale(tmp_path / "a", "scale64_ordered", X, W, seed, blocks, n,
                      np.float64, scratch, f64)
    again = run_scale(tmp_path / "b", "scale64_ordered", X, W, seed, blocks, n,
                      np.float64, first[7], f64)
    np.testing.assert_allclose(first[3], [np.dot(seed, X), seed.sum()], rtol=1e-12)
    assert again[3].tobytes() == first[3].tobytes()


def test_deterministic_workgroup_broadcast(tmp_path):
    # Y = s X + s with s = w² broadcast through workgroup memory: dW[0] =
    # 2 w Σ seed (x + 1), ordered in the block (tile[0]) and over blocks.
    blocks = 32
    n = blocks * 64
    X = RNG.standard_normal(n).astype(np.float32)
    W = np.array([0.8], np.float32)
    seed = RNG.standard_normal(n).astype(np.float32)
    scratch = np.zeros(scratch_words("broadcast_ordered", blocks), np.int32)
    outs = []
    for k in range(3):
        out = launch(tmp_path / f"r{k}", "deterministic.mlir", "broadcast_ordered",
                     blocks, 64, [X, np.zeros_like(X), W, np.zeros_like(W),
                                  np.zeros_like(X), seed, scratch])
        outs.append(out)
    x, s = X.astype(np.float64), seed.astype(np.float64)
    np.testing.assert_allclose(outs[0][3], [2 * 0.8 * np.dot(s, x + 1)], rtol=1e-4)
    np.testing.assert_allclose(outs[0][1], s * 0.64, rtol=1e-5)
    for out in outs[1:]:
        assert out[3].tobytes() == outs[0][3].tobytes()
