#!/usr/bin/python3
# ===- examples/training/train.py - An MLP trained by host-level AD -----=== #
#
# Trains the two-layer MLP of mlp.mlir (forward kernels plus the host
# function @loss_fn; its gradient is one nabla.autodiff of @loss_fn) on three
# interleaved spirals with SGD, on the default device (lavapipe without a
# GPU): one nabla-run of @train does every step; the loss of each step is
# printed and the curve saved as a PNG. --compile-all also compiles the
# program (host code and kernels, the gradient's included) for NVVM, ROCDL,
# SPIR-V and Metal. --ranks N also runs the data-parallel variant
# (data_parallel.mlir's functions appended to mlp.mlir) under
# `mpirun -np N`, each rank a shard of the batch, the gradient of a loss
# summed over ranks by mpi.allreduce, and compares the loss curves.
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


def data_parallel_text(text):
    """mlp.mlir's module with data_parallel.mlir's functions and kernels
    appended, and the MPI implementation named for the lowering."""
    with open(os.path.join(HERE, "data_parallel.mlir")) as file:
        extra = file.read()
    body = extra[extra.index("module {") + len("module {"):
                 extra.rstrip().rindex("}")]
    text = text.replace(
        "module attributes {gpu.container_module} {",
        "module attributes {gpu.container_module, dlti.map = "
        "#dlti.map<\"MPI:Implementation\" = \"MPICH\">} {", 1)
    closing = text.rstrip().rindex("}")
    return text[:closing] + body + "}\n"


def train_data_parallel(text, X, y, params, steps, lr, ranks, work,
                        timeout=600):
    """@train_dp under `mpirun -np ranks`: every rank's losses (the same
    global loss) and rank 0's parameters after the last step."""
    program = os.path.join(work, "mlp_dp.mlir")
    with open(program, "w") as file:
        file.write(data_parallel_text(text))
    args = []
    for k, array in enumerate([X, y, *params, np.zeros(steps, np.float32)]):
        path = os.path.join(work, f"arg{k}.npy")
        np.save(path, array)
        args.append(f"--arg={path}")
    command = ["mpirun", "-np", str(ranks),
               os.path.join(ROOT, "build", "bin", "nabla-run"), program,
               "--entry=train_dp", *args, f"--arg=f32:{lr!r}",
               f"--out={os.path.join(work, 'out{rank}')}"]
    done = subprocess.run(command, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"mpirun failed:\n{done.stderr}")
    losses = [np.load(os.path.join(work, f"out{r}", "arg6.npy"))
              for r in range(ranks)]
    final = [np.load(os.path.join(work, "out0", f"arg{k}.npy"))
             for k in range(2, 6)]
    return losses, final


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
    parser.add_argument("--ranks", type=int, default=0,
                        help="also train data parallel on this many MPI "
                             "ranks (mpirun) and compare the loss curves")
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
    if args.ranks:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="nabla-dp-") as work:
            ranked, final = train_data_parallel(
                text, X, y, parameters(2, args.hidden, 3), args.steps,
                args.lr, args.ranks, work)
        difference = max(float(np.max(np.abs(r - losses))) for r in ranked)
        print(f"data parallel on {args.ranks} ranks: final loss "
              f"{ranked[0][-1]:.5f}, largest difference from the "
              f"single-process curve {difference:.2e}")
    if args.compile_all:
        for target, ok in compile_all(path).items():
            print(f"compiled for {target}: {'ok' if ok else 'FAILED'}")


if __name__ == "__main__":
    main()
