# ===- test_training_example.py - examples/training --------------------=== #
#
# The MLP of examples/training/mlp.mlir: the gradient of its host function
# @loss_fn (five launches, one request) against finite differences on a tiny
# size; 20 SGD steps of @train against a NumPy reference of the same model
# (loss per step, final parameters) with a decreasing loss; train.py run as a
# user runs it (loss per step printed, the plot written, every target
# compiled); the data-parallel variant on two MPI ranks (mpirun -np 2, this
# test starts it) against the single-process run on the same global batch.
# ===----------------------------------------------------------------------=== #
import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "training")


def mlp_text():
    with open(os.path.join(EXAMPLE, "mlp.mlir")) as file:
        return file.read()


def gelu(z):
    inner = 0.7978845608 * (z + 0.044715 * z ** 3)
    return 0.5 * z * (1 + np.tanh(inner)), inner


def reference_step(X, y, params, lr):
    """Loss and SGD-updated parameters, in float64."""
    W1, b1, W2, b2 = params
    z = X @ W1 + b1
    h, inner = gelu(z)
    logits = h @ W2 + b2
    m = logits.max(1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(1, keepdims=True)
    n = X.shape[0]
    loss = float(np.mean(np.log(e.sum(1)) + m[:, 0] -
                         logits[np.arange(n), y]))
    dlogits = p.copy()
    dlogits[np.arange(n), y] -= 1
    dlogits /= n
    dW2, db2 = h.T @ dlogits, dlogits.sum(0)
    dh = dlogits @ W2.T
    t = np.tanh(inner)
    dgelu = 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * 0.7978845608 * \
        (1 + 3 * 0.044715 * z * z)
    dz = dh * dgelu
    dW1, db1 = X.T @ dz, dz.sum(0)
    return loss, [W1 - lr * dW1, b1 - lr * db1, W2 - lr * dW2, b2 - lr * db2]


def data(batch, inputs, hidden, classes, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((batch, inputs)).astype(np.float32)
    y = rng.integers(0, classes, batch).astype(np.int32)
    params = [(rng.standard_normal((inputs, hidden)) * 0.7).astype(np.float32),
              (rng.standard_normal(hidden) * 0.3).astype(np.float32),
              (rng.standard_normal((hidden, classes)) * 0.7).astype(np.float32),
              (rng.standard_normal(classes) * 0.3).astype(np.float32)]
    return X, y, params


def test_loss_gradient_matches_finite_differences():
    X, y, params = data(8, 2, 5, 3, seed=0)
    seeds = {2: np.zeros((2, 5), np.float32), 3: np.zeros(5, np.float32),
             4: np.zeros((5, 3), np.float32), 5: np.zeros(3, np.float32),
             6: np.ones(1, np.float32)}
    report = nabla.check_gradient_host(
        mlp_text(), "loss_fn", [X, y, *params, np.zeros(1, np.float32)],
        dup=[2, 3, 4, 5, 6], seeds=seeds, forward=True)
    details = {k: v for k, v in report.items() if isinstance(k, int)}
    assert report["ok"], details
    assert report["dot"][1] <= 1.0


def test_sgd_follows_the_numpy_reference():
    X, y, params = data(48, 2, 8, 3, seed=1)
    steps, lr = 20, 0.5
    losses = np.zeros(steps, np.float32)
    result = nabla.run_host(mlp_text(), "train",
                            [X, y, *params, losses, lr])
    got = result.args[6]
    reference = [p.astype(np.float64) for p in params]
    want = []
    for _ in range(steps):
        loss, reference = reference_step(X.astype(np.float64), y, reference,
                                         lr)
        want.append(loss)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)
    for mine, theirs in zip(result.args[2:6], reference):
        np.testing.assert_allclose(mine, theirs, rtol=2e-3, atol=2e-4)
    assert got[-1] < 0.9 * got[0]


def test_example_script(tmp_path):
    plot = tmp_path / "loss.png"
    done = subprocess.run(
        [sys.executable, os.path.join(EXAMPLE, "train.py"), "--steps", "20",
         "--plot", str(plot), "--compile-all"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    losses = [float(line.split()[-1]) for line in lines
              if line.startswith("step")]
    assert len(losses) == 20 and losses[-1] < losses[0]
    for target in ("nvvm", "rocdl", "spirv", "metal"):
        assert f"compiled for {target}: ok" in lines
    assert plot.stat().st_size > 0


def load_train_module():
    spec = importlib.util.spec_from_file_location(
        "train", os.path.join(EXAMPLE, "train.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_data_parallel_on_two_ranks_matches_one_process(tmp_path):
    if not shutil.which("mpirun"):
        raise AssertionError("mpirun not found: scripts/install-deps.sh "
                             "installs MPICH")
    train = load_train_module()
    X, y = train.spirals(48)
    params = train.parameters(2, 8, 3)
    steps, lr = 12, 1.0
    losses = np.zeros(steps, np.float32)
    single = nabla.run_host(mlp_text(), "train", [X, y, *params, losses, lr])
    ranked, final = train.train_data_parallel(mlp_text(), X, y, params, steps,
                                              lr, 2, str(tmp_path),
                                              timeout=300)
    for losses_of_rank in ranked:
        np.testing.assert_allclose(losses_of_rank, single.args[6],
                                   rtol=1e-5, atol=1e-6)
    for mine, theirs in zip(final, single.args[2:6]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)
    assert ranked[0][-1] < ranked[0][0]
