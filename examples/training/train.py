#!/usr/bin/python3
# ===- examples/training/train.py - An MLP trained by host-level AD -----=== #
#
# Trains the two-layer MLP of mlp.mlir (forward kernels plus the host
# function @loss_fn; its gradient is one nabla.autodiff of @loss_fn) on three
# interleaved spirals with SGD, on the default device (lavapipe without a
# GPU): one nabla-run of @train does every step; the loss of each step is
# printed and the curve saved as a PNG. --compile-all also compiles the
# program (host code and kernels, the gradient's included) for NVVM, ROCDL,
# SPIR-V and Metal. --ranks N runs the data-parallel variant (mlp_mpi.mlir)
# under `mpirun -np N`, each rank a shard of the batch, the gradients summed
# by mpi.allreduce.
#
#   PYTHONPATH=build/python /usr/bin/python3 examples/training/train.py --steps 200
# ===----------------------------------------------------------------------=== #
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))

import nabla  # noqa: E402


def spirals(count, classes=3, seed=0):
    """`count` points of `classes` interleaved spirals in the plane."""
    rng = np.random.default_rng(seed)
    labels = np.arange(count) % classes
    radius = rng.uniform(0.1, 1.0, count)
    angle = labels * 2 * np.pi / classes + radius * 3.0 + \
        rng.normal(0, 0.15, count)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1)
    return points.astype(np.float32), labels.astype(np.int32)


def parameters(inputs, hidden, classes, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((inputs, hidden)) /
             np.sqrt(inputs)).astype(np.float32),
            np.zeros(hidden, np.float32),
            (rng.standard_normal((hidden, classes)) /
             np.sqrt(hidden)).astype(np.float32),
            np.zeros(classes, np.float32)]


def train(text, X, y, params, steps, lr, target=None):
    """Runs @train: returns the loss before each step and the parameters
    after the last."""
    losses = np.zeros(steps, np.float32)
    result = nabla.run_host(text, "train", [X, y, *params, losses, lr],
                            target=target)
    return result.args[6], result.args[2:6]


def accuracy(X, y, params):
    W1, b1, W2, b2 = [p.astype(np.float64) for p in params]
    z = X @ W1 + b1
    h = 0.5 * z * (1 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))
    return float(np.mean(np.argmax(h @ W2 + b2, 1) == y))


def compile_all(path):
    """Compiles mlp.mlir (its @grad_fn included) for every target with
    nabla-opt; returns {target: ok}."""
    tool = os.path.join(ROOT, "build", "bin", "nabla-opt")
    results = {}
    for target, flag in (("nvvm", "--nabla-to-nvvm=chip=sm_80"),
                         ("rocdl", "--nabla-to-rocdl=chip=gfx90a"),
                         ("spirv", "--nabla-to-spirv"),
                         ("metal", "--nabla-to-metal")):
        done = subprocess.run([tool, path, flag, "-o", os.devnull],
                              capture_output=True, text=True)
        results[target] = done.returncode == 0
        if done.returncode:
            print(done.stderr, file=sys.stderr)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=192)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--target", default=None)
    parser.add_argument("--plot", default="loss.png")
    parser.add_argument("--compile-all", action="store_true")
    args = parser.parse_args()

    path = os.path.join(HERE, "mlp.mlir")
    text = open(path).read()
    X, y = spirals(args.batch)
    params = parameters(2, args.hidden, 3)
    print(f"before: accuracy {accuracy(X, y, params):.3f}")
    losses, params = train(text, X, y, params, args.steps, args.lr,
                           args.target)
    for step, loss in enumerate(losses):
        print(f"step {step:4d}  loss {loss:.5f}")
    print(f"after {args.steps} steps: accuracy {accuracy(X, y, params):.3f}")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.figure(figsize=(6, 3.5))
        plt.plot(losses)
        plt.xlabel("SGD step")
        plt.ylabel("mean cross-entropy")
        plt.title("MLP on three spirals, gradients by host-level AD")
        plt.tight_layout()
        plt.savefig(args.plot, dpi=120)
        print(f"loss curve: {args.plot}")
    if args.compile_all:
        for target, ok in compile_all(path).items():
            print(f"compiled for {target}: {'ok' if ok else 'FAILED'}")


if __name__ == "__main__":
    main()
