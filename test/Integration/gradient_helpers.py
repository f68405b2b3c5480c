# ===- gradient_helpers.py - Shared helpers of the gradient tests --------=== #
#
# What every gradient test (test_gradients_*.py, test_loops.py) shares: the
# paths of the tools and kernels, one random generator (seeded once, drawn from
# in test order), `launch` (runs a kernel of gradients/ with nabla-run and
# returns the final value of every buffer argument), the subgroup size of the
# default device, and the runners and numpy references of the tests that span
# several kernel families (subgroup and workgroup collectives).
#
# The tests check derivatives by running kernels, on the default device:
# reverse mode against central finite differences in float64 of <M(s), w> (M
# maps the initial state of all buffers and active scalars to the final state
# of the buffers), and the dot-product test <J v, w> = <v, J^T w> between
# forward and reverse mode. Enzyme's semantics: on entry reverse shadows hold
# w, on exit J^T w; forward shadows hold v on entry, J v on exit.
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
KERNELS = os.path.join(ROOT, "test", "Integration", "gradients")
RNG = np.random.default_rng(7)


def launch(tmp_path, name, kernel, grid, block, args, extra=()):
    """Runs `kernel`; returns the final value of every buffer argument."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            np.save(tmp_path / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp_path / f'in{k}.npy'}")
        else:
            specs.append(f"--arg={arg}")
    out = tmp_path / f"out-{kernel}"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), os.path.join(KERNELS, name),
         f"--kernel={kernel}", f"--grid={grid}", f"--block={block}",
         f"--out={out}"] + specs + list(extra), capture_output=True, text=True,
        timeout=300)
    assert result.returncode == 0, result.stderr
    return {k: np.load(out / f"arg{k}.npy")
            for k, arg in enumerate(args) if isinstance(arg, np.ndarray)}


def f64(value):
    return f"f64:{value!r}"


def device_subgroup_size(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    np.save(tmp_path / "info.npy", np.zeros(128, np.int32))
    r = subprocess.run(
        [os.path.join(BIN, "nabla-run"),
         os.path.join(ROOT, "test", "Integration", "corpus", "subgroup_size.mlir"),
         "--kernel=subgroup_info", "--grid=1", "--block=64", f"--out={tmp_path}",
         f"--arg={tmp_path / 'info.npy'}"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return int(np.load(tmp_path / "arg0.npy")[0])


def run_pair(tmp_path, kernel, X, seed, grid, block, out_len=None,
             name="parallel.mlir"):
    """Runs `kernel` on (X, seedX, Y, seedY) and returns the final shadows."""
    n = len(X)
    Y = np.zeros(out_len or n, np.float32)
    out = launch(tmp_path / kernel, name, kernel, grid, block,
                 [X, seed[0].astype(np.float32), Y, seed[1].astype(np.float32)])
    return out[1].astype(np.float64), out[3].astype(np.float64)


def run_collective(tmp_path, stem, X, w, v, blocks=2):
    """Reverse (generated kernel adjoint, zero cotangent on X) and forward
    shadows of collectives.mlir's `stem` over `blocks` workgroups of 64."""
    gX, gY = run_pair(tmp_path / "rev", stem + "_grad", X,
                      (np.zeros(len(X)), w), blocks, 64,
                      name="collectives.mlir")
    np.testing.assert_array_equal(gY, 0)  # Y is only written
    _, tY = run_pair(tmp_path / "fwd", stem + "_tangent", X,
                     (v, np.zeros(len(X))), blocks, 64, name="collectives.mlir")
    # Dot-product test between the two modes.
    assert np.isclose(np.dot(tY, w), np.dot(v, gX), rtol=1e-4), stem
    return gX, tY


def others_product(x, group):
    """Per element, the product of the other members of its group."""
    g = x.reshape(-1, group)
    out = np.empty_like(g)
    for j in range(group):
        out[:, j] = np.prod(np.delete(g, j, axis=1), axis=1)
    return out.reshape(-1)
