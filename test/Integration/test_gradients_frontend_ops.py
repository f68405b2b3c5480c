# ===- test_gradients_frontend_ops.py - A frontend's own ops -------------=== #
#
# Ops of a frontend dialect (examples/frontend-dialect, the nabla_test dialect
# linked into nabla-test-opt) whose derivatives come from models the frontend
# attached, not from Nabla: each kernel of gradients/ using them is
# differentiated with nabla-opt, its test ops lowered, and reverse and forward
# mode run on the default device against the closed forms and finite
# differences. Helpers: gradient_helpers.py.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import numpy as np

from gradient_helpers import BIN, KERNELS, RNG


def test_external_rule_of_a_frontend_op(tmp_path):
    # nabla_test.cube gets its derivative from a model the "frontend" (the
    # test dialect) attached; differentiate with nabla-opt, lower the test op,
    # run reverse and forward mode on the device.
    plain = tmp_path / "plain.mlir"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-test-opt"), os.path.join(KERNELS, "external_rule.mlir"),
         "--nabla-differentiate", "--nabla-test-lower", "-o", str(plain)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    n = 100
    a = RNG.uniform(-1, 1, n).astype(np.float32)
    w = RNG.standard_normal(n).astype(np.float32)
    v = RNG.standard_normal(n).astype(np.float32)

    def run(kernel, args, tag):
        tmp = tmp_path / tag
        tmp.mkdir()
        specs = []
        for k, arg in enumerate(args):
            np.save(tmp / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp / f'in{k}.npy'}")
        r = subprocess.run([os.path.join(BIN, "nabla-run"), str(plain),
                            f"--kernel={kernel}", "--grid=2", "--block=64",
                            f"--out={tmp}"] + specs + [f"--arg=index:{n}"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return [np.load(tmp / f"arg{k}.npy") for k in range(len(args))]

    grad = run("f_grad", [a, w], "rev")[1]
    np.testing.assert_allclose(grad, w * (3 * a * a + 1), rtol=1e-5)
    tangent = run("f_tangent", [a, v], "fwd")[1]
    np.testing.assert_allclose(tangent, v * (3 * a * a + 1), rtol=1e-5)
    eps = 1e-2
    plus = run("f_kernel", [(a + eps * v).astype(np.float32)], "p")[0]
    minus = run("f_kernel", [(a - eps * v).astype(np.float32)], "m")[0]
    fd = np.dot(plus.astype(np.float64) - minus, w) / (2 * eps)
    assert np.isclose(np.dot(v, grad), fd, rtol=1e-3)
    assert np.isclose(np.dot(tangent, w), np.dot(v, grad), rtol=1e-4)


def test_frontend_memory_and_region_ops(tmp_path):
    # nabla_test.scaled_load (a memory op) inside nabla_test.once (a region
    # op): their derivatives come from the ForwardModeOpInterface and
    # ReverseModeOpInterface models the "frontend" attached, written against
    # the public emitter API only. B[i] = (A[i] * S[0])^2.
    plain = tmp_path / "plain.mlir"
    result = subprocess.run(
        [os.path.join(BIN, "nabla-test-opt"),
         os.path.join(KERNELS, "frontend_memory_region.mlir"),
         "--nabla-differentiate", "--nabla-test-lower", "-o", str(plain)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    n = 100
    a = RNG.uniform(-1, 1, n).astype(np.float32)
    s = np.array([0.7], np.float32)
    w = RNG.standard_normal(n).astype(np.float32)
    da_dir = RNG.standard_normal(n).astype(np.float32)
    ds_dir = np.array([0.3], np.float32)

    def run(kernel, args, tag):
        tmp = tmp_path / tag
        tmp.mkdir()
        specs = []
        for k, arg in enumerate(args):
            np.save(tmp / f"in{k}.npy", arg)
            specs.append(f"--arg={tmp / f'in{k}.npy'}")
        r = subprocess.run([os.path.join(BIN, "nabla-run"), str(plain),
                            f"--kernel={kernel}", "--grid=2", "--block=64",
                            f"--out={tmp}"] + specs + [f"--arg=index:{n}"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return [np.load(tmp / f"arg{k}.npy") for k in range(len(args))]

    zeros = np.zeros(n, np.float32)
    out = run("g_grad", [a, zeros, s, np.zeros(1, np.float32), zeros, w],
              "rev")
    # dB = w; B = (a s)^2: dA = 2 a s^2 w, dS = sum 2 a^2 s w.
    np.testing.assert_allclose(out[1], 2 * a * s[0] ** 2 * w, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(out[3], [np.sum(2 * a * a * s[0] * w)],
                               rtol=1e-4)
    np.testing.assert_allclose(out[4], (a * s[0]) ** 2, rtol=1e-6)
    out = run("g_tangent", [a, da_dir, s, ds_dir, zeros, zeros], "fwd")
    tangent = out[5]
    np.testing.assert_allclose(
        tangent, 2 * a * s[0] * (da_dir * s[0] + a * ds_dir[0]), rtol=1e-5,
        atol=1e-6)
    # Both modes agree with finite differences along (da_dir, ds_dir).
    eps = 1e-2
    plus = run("g_kernel", [(a + eps * da_dir).astype(np.float32),
                            (s + eps * ds_dir).astype(np.float32), zeros],
               "p")[2]
    minus = run("g_kernel", [(a - eps * da_dir).astype(np.float32),
                             (s - eps * ds_dir).astype(np.float32), zeros],
                "m")[2]
    fd = (plus.astype(np.float64) - minus) / (2 * eps)
    np.testing.assert_allclose(tangent, fd, rtol=1e-2, atol=1e-3)
