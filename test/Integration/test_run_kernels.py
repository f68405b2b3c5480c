# ===- test_run_kernels.py - Run corpus kernels, compare with numpy -------=== #
#
# Every kernel of test/Integration/corpus runs through `nabla-run` on the
# default device (lavapipe on a machine without a GPU) and its outputs are
# compared with a reference computed independently in numpy; `nabla-launch`
# runs a `nabla-compile` directory the same way. The bad-input cases check
# exit status 1 (errors) and 2 (usage) and the message.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import math
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
CORPUS = os.path.join(ROOT, "test", "Integration", "corpus")
RNG = np.random.default_rng(20261202)


def tool(name):
    return os.path.join(BIN, name)


def run(args, expect=0):
    result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert result.returncode == expect, (
        f"{' '.join(args)} exited {result.returncode}, expected {expect}\n"
        f"stdout: {result.stdout}\nstderr: {result.stderr}")
    return result


def launch(tmp_path, kernel_file, kernel, grid, block, args, expect=0,
           extra=(), launcher=None):
    """Runs a kernel; `args` are numpy arrays (buffers) or 'type:value'
    strings (scalars). Returns {k: output array} for buffer parameters."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    specs = []
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            path = tmp_path / f"in{k}.npy"
            np.save(path, arg)
            specs.append(f"--arg={path}")
        else:
            specs.append(f"--arg={arg}")
    out = tmp_path / "out"
    command = (launcher or [tool("nabla-run"), os.path.join(CORPUS, kernel_file)])
    result = run(command + [f"--kernel={kernel}", f"--grid={grid}",
                            f"--block={block}", f"--out={out}"]
                 + specs + list(extra), expect)
    if expect != 0:
        return result
    return {k: np.load(out / f"arg{k}.npy")
            for k, arg in enumerate(args) if isinstance(arg, np.ndarray)}


def test_seed_mul(tmp_path):
    a = RNG.standard_normal(100).astype(np.float32)
    out = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 2, 64,
                 [a, "index:90"])
    expected = a.copy()
    expected[:90] = a[:90] * a[:90]
    np.testing.assert_array_equal(out[0], expected)


def test_2d_static_and_every_scalar_type(tmp_path):
    a = RNG.standard_normal((37, 5)).astype(np.float32)
    b = RNG.standard_normal((4, 8))
    out = launch(tmp_path, "shapes_scalars.mlir", "scale2d", "5,1", "8,8",
                 [a, b, "f32:1.5", "f64:-2.0", "i32:3", "i64:-7", "index:11"])
    np.testing.assert_allclose(out[0], a * np.float32(1.5) + 3 - 7 + 11,
                               rtol=1e-6)
    np.testing.assert_array_equal(out[1], b * -2.0)


def test_workgroup_reduction_with_barriers_and_float_atomics(tmp_path):
    x = RNG.random(1000).astype(np.float32)
    out = launch(tmp_path, "workgroup_reduce.mlir", "block_sum", 16, 64,
                 [x, np.zeros(1, np.float32), "index:1000"])
    np.testing.assert_allclose(out[1][0], x.astype(np.float64).sum(),
                               rtol=1e-5)


def subgroup_size(tmp_path):
    info = launch(tmp_path, "subgroup_size.mlir", "subgroup_info", 1, 64,
                  [np.zeros(128, np.int32)])[0]
    size = int(info[0])
    assert size > 0 and np.all(info[0::2] == size)
    np.testing.assert_array_equal(info[1::2], np.arange(64) % size)
    return size


def test_subgroup_shuffles(tmp_path):
    size = subgroup_size(tmp_path)
    n = 64
    x = RNG.standard_normal(n).astype(np.float32)
    y = launch(tmp_path, "subgroup.mlir", "shuffles", 1, n,
               [x, np.zeros(4 * n, np.float32)])[1].reshape(n, 4)
    lane = np.arange(n) % size
    base = np.arange(n) - lane
    np.testing.assert_array_equal(y[:, 0], x[base + (lane ^ 1)])
    down = np.where(lane + 1 < size, x[np.minimum(np.arange(n) + 1, n - 1)], -1)
    np.testing.assert_array_equal(y[:, 1], down)
    up = np.where(lane >= 1, x[np.maximum(np.arange(n) - 1, 0)], -1)
    np.testing.assert_array_equal(y[:, 2], up)
    np.testing.assert_array_equal(y[:, 3], x[base])


def test_subgroup_reduce(tmp_path):
    size = subgroup_size(tmp_path)
    x = RNG.standard_normal(64).astype(np.float32)
    y = launch(tmp_path, "subgroup.mlir", "subgroup_sum", 1, 64,
               [x, np.zeros(64, np.float32)])[1]
    sums = x.reshape(-1, size).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(y, np.repeat(sums, size), rtol=1e-5, atol=1e-6)


def test_control_flow_subview_calls_and_integer_atomics(tmp_path):
    n = 200
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    c = RNG.standard_normal(6).astype(np.float32)
    out = launch(tmp_path, "control_flow.mlir", "poly", 4, 64,
                 [x, c, np.zeros(1, np.int32), f"index:{n}"])
    p = np.zeros(n, np.float32)
    for k in range(1, 5):
        p = p * x + c[k]
    np.testing.assert_allclose(out[0], np.maximum(p, 0), rtol=1e-5, atol=1e-6)
    assert out[2][0] == n


erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)


def test_math_functions(tmp_path):
    x = RNG.uniform(0.1, 0.9, 256).astype(np.float32)
    out = launch(tmp_path, "math.mlir", "math_kernel", 4, 64,
                 [x, np.zeros(256, np.float32), "index:256"])
    d = x.astype(np.float64)
    expected = (np.sin(d) + np.cos(d) + np.tan(d) + np.exp(d) + np.exp2(d)
                + np.expm1(d) + np.log(d) + np.log1p(d) + np.log2(d) + np.sqrt(d)
                + 1 / np.sqrt(d) + np.tanh(d) + d ** 1.5 + (d * 1.5 + d)
                + np.abs(d) + erf(d) + np.arctan(d) + np.arctan2(d, 1.5)
                + np.floor(d) + np.ceil(d) + np.log10(d) + np.cbrt(d)
                + np.sinh(d) + np.cosh(d) + np.copysign(d, 1.5) + np.round(d)
                + d ** 2 + np.arcsin(d) + np.arccos(d) + np.arcsinh(d)
                + np.arccosh(d + 1.5) + np.arctanh(d) + erfc(d))
    np.testing.assert_allclose(out[1], expected, rtol=2e-4)


def test_erfc_relative_accuracy_in_the_tail(tmp_path):
    # 1 - erf(x) would lose every digit past x ~ 3; erfc keeps ~1e-6.
    x = np.concatenate([np.linspace(-3, 9, 250), [0, 0.5, 3, 9, 10, 11]])
    x = x.astype(np.float32)
    out = launch(tmp_path, "math.mlir", "erfc_kernel", 4, 64,
                 [x, np.zeros(x.size, np.float32), f"index:{x.size}"])
    expected = erfc(x.astype(np.float64))
    normal = expected > np.finfo(np.float32).tiny
    np.testing.assert_allclose(out[1][normal], expected[normal], rtol=1e-5)
    # Past the last normal f32 (x > ~9.2) only a tiny or zero result is right.
    assert np.all(np.abs(out[1][~normal]) <= np.finfo(np.float32).tiny)


@pytest.mark.parametrize("m", [0, 1, 7])
def test_loop_results_with_zero_and_more_trips(tmp_path, m):
    # m = 0: every loop result is its init value (SPIR-V once returned 0).
    n = 100
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    out = launch(tmp_path, "zero_trip_loops.mlir", "loops", 2, 64,
                 [x, np.zeros(4 * n, np.float32), np.zeros(n, np.int32),
                  f"index:{m}", f"index:{n}"])
    one = np.float32(1)
    halved, counted, nested = x.copy(), x.copy(), x.copy()
    for k in range(m):  # the kernel's f32 operations, in its order
        halved = halved * np.float32(0.5) + one
        counted = counted + one
        for _ in range(k):
            nested = nested + one
    y = out[1].reshape(4, n)
    np.testing.assert_array_equal(y[0], halved)
    np.testing.assert_array_equal(out[2], 7 + 3 * m)
    np.testing.assert_array_equal(y[1], counted)
    np.testing.assert_array_equal(y[2], 2 * x if m > 0 else x - one)
    np.testing.assert_array_equal(y[3], nested)


def test_private_scratch_buffer(tmp_path):
    n = 100
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    out = launch(tmp_path, "private_scratch.mlir", "scratch", 2, 64,
                 [x, f"index:{n}"])
    k = np.arange(16, dtype=np.float32)
    expected = np.zeros(n, np.float32)
    for i in range(n):
        buf = x[i] * k + np.float32(1)
        for j in range(16):  # the kernel's order of f32 additions
            expected[i] += buf[(j + i) % 16] * k[j]
    np.testing.assert_allclose(out[0], expected, rtol=1e-6, atol=1e-5)


def test_nabla_launch_runs_a_compiled_directory(tmp_path):
    compiled = tmp_path / "compiled"
    run([tool("nabla-compile"), os.path.join(CORPUS, "seed_primal.mlir"),
         "--target=spirv", "--block=32", "-o", str(compiled)])
    a = RNG.standard_normal(50).astype(np.float32)
    out = launch(tmp_path, None, "mul_kernel", 2, 32, [a, "index:50"],
                 launcher=[tool("nabla-launch"), str(compiled)])
    np.testing.assert_array_equal(out[0], a * a)


# --- bad input: a message and exit 1 (errors) or 2 (usage), never a crash.

def test_wrong_argument_count(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [np.zeros(4, np.float32)], expect=1)
    assert "takes 2 arguments, got 1" in r.stderr
    # The signature, so that the user sees what to pass.
    assert "mul_kernel(memref<" in r.stderr and "TYPE:VALUE" in r.stderr


def test_null_for_a_required_buffer(tmp_path):
    # Only a buffer the kernel tests for null is optional.
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               ["null", "index:16"], expect=1)
    assert "parameter #0 (memref<?xf32>) cannot be null" in r.stderr


def test_wrong_dtype(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [np.zeros(4, np.float64), "index:4"], expect=1)
    assert "needs dtype f4" in r.stderr


def test_wrong_rank(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [np.zeros((2, 2), np.float32), "index:4"], expect=1)
    assert "has rank 1" in r.stderr


def test_wrong_static_extent(tmp_path):
    r = launch(tmp_path, "shapes_scalars.mlir", "scale2d", 1, "8,8",
               [np.zeros((2, 2), np.float32), np.zeros((4, 7)), "f32:1",
                "f64:1", "i32:1", "i64:1", "index:1"], expect=1)
    assert "needs extent 8 in dimension 1" in r.stderr


def test_wrong_scalar_type(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [np.zeros(4, np.float32), "f32:4"], expect=1)
    assert "parameter #1 is index, got 'f32:4'" in r.stderr


def test_scalar_for_buffer(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               ["f32:1", "index:4"], expect=1)
    assert "is a buffer" in r.stderr


def test_missing_npy(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [str(tmp_path / "nothere.npy"), "index:4"], expect=1)
    assert "cannot open" in r.stderr


def test_malformed_npy(tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not an npy file at all")
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [str(bad), "index:4"], expect=1)
    assert "not a supported .npy file" in r.stderr


def test_unknown_kernel(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "nope", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1)
    assert "unknown kernel 'nope' (kernels: mul_kernel)" in r.stderr


def test_block_too_large(tmp_path):
    # No target runs more than 1024 threads in a dimension: a usage error.
    r = launch(tmp_path / "flag", "seed_primal.mlir", "mul_kernel", 1, 100000,
               [np.zeros(4, np.float32), "index:4"], expect=2)
    assert "each 1 to 1024" in r.stderr
    # Within the flag's range but over the device's limit: a launch error.
    r = launch(tmp_path / "device", "seed_primal.mlir", "mul_kernel", 1, "1024,1024",
               [np.zeros(4, np.float32), "index:4"], expect=1)
    assert "exceeds" in r.stderr


def test_unknown_relocation(tmp_path):
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               extra=[f"--reloc=host.x={tmp_path}/x.npy"])
    assert "not a relocation record" in r.stderr


@pytest.mark.parametrize("flags,message", [
    (["--grid=0"], "malformed --grid"),
    (["--block=a"], "malformed --block"),
    (["--target=opencl"], "unknown --target"),
    (["--bogus"], "unknown option '--bogus'"),
    (["--reloc=novalue"], "malformed --reloc"),
])
def test_usage_errors(tmp_path, flags, message):
    r = run([tool("nabla-run"), os.path.join(CORPUS, "seed_primal.mlir"),
             "--kernel=mul_kernel", "--grid=1", "--block=1"] + flags, 2)
    assert message in r.stderr


def test_missing_required_flags():
    r = run([tool("nabla-run"), os.path.join(CORPUS, "seed_primal.mlir")], 2)
    assert "--kernel, --grid and --block are required" in r.stderr


def test_no_cuda_driver_fails_cleanly(tmp_path):
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a CUDA device is present")
    r = launch(tmp_path, "seed_primal.mlir", "mul_kernel", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               extra=["--target=cuda"])
    assert "CUDA" in r.stderr


def test_launch_rejects_other_target_directory(tmp_path):
    compiled = tmp_path / "nvvm"
    run([tool("nabla-compile"), os.path.join(CORPUS, "seed_primal.mlir"),
         "--target=nvvm", "--chip=sm_80", "-o", str(compiled)])
    r = launch(tmp_path, None, "mul_kernel", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               launcher=[tool("nabla-launch"), str(compiled)])
    assert "compiled for 'nvvm'" in r.stderr


def test_launch_rejects_other_block(tmp_path):
    compiled = tmp_path / "spirv"
    run([tool("nabla-compile"), os.path.join(CORPUS, "seed_primal.mlir"),
         "--target=spirv", "--block=32", "-o", str(compiled)])
    r = launch(tmp_path, None, "mul_kernel", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               launcher=[tool("nabla-launch"), str(compiled)])
    assert "compiled for workgroup size 32,1,1" in r.stderr


def test_relocated_host_table(tmp_path):
    # abi v2 (table binding filled at launch) and v1 (contents materialized
    # at compile time) give identical results.
    c = np.array([1.5, -2.0, 0.25, 4.0], np.float32)
    np.save(tmp_path / "coeffs.npy", c)
    a = RNG.standard_normal(50).astype(np.float32)
    reloc = f"--reloc=host.coeffs={tmp_path / 'coeffs.npy'}"
    v2 = launch(tmp_path / "v2", "relocated.mlir", "scale", 1, 64,
                [a, "index:50"], extra=[reloc])
    v1 = launch(tmp_path / "v1", "relocated.mlir", "scale", 1, 64,
                [a, "index:50"], extra=[reloc, "--abi=v1"])
    np.testing.assert_array_equal(v2[0], a * c[np.arange(50) % 4])
    np.testing.assert_array_equal(v1[0], v2[0])


def test_relocated_writable_object_comes_back(tmp_path):
    state = np.full(64, -1, np.float32)
    np.save(tmp_path / "state.npy", state)
    a = RNG.standard_normal(40).astype(np.float32)
    launch(tmp_path, "relocated_writable.mlir", "publish", 1, 64, [a, "index:40"],
           extra=[f"--reloc=Main.state={tmp_path / 'state.npy'}"])
    out = np.load(tmp_path / "out" / "reloc-Main_state.npy")
    np.testing.assert_array_equal(out[:40], 2 * a)
    np.testing.assert_array_equal(out[40:], -1)


def test_relocation_missing_contents(tmp_path):
    r = launch(tmp_path, "relocated.mlir", "scale", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1)
    assert ("reads the relocated object 'host.coeffs': pass "
            "--reloc=host.coeffs=FILE.npy") in r.stderr
    r = launch(tmp_path, "relocated.mlir", "scale", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               extra=["--abi=v1"])
    assert "cannot be materialized" in r.stderr


def test_relocation_unknown_key(tmp_path):
    np.save(tmp_path / "c.npy", np.zeros(4, np.float32))
    r = launch(tmp_path, "relocated.mlir", "scale", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               extra=[f"--reloc=host.other={tmp_path / 'c.npy'}"])
    assert "--reloc names 'host.other', which is not a relocation record" in r.stderr
    r = launch(tmp_path, "relocated.mlir", "scale", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=2,
               extra=["--abi=v3"])
    assert "malformed --abi=v3" in r.stderr


def test_relocation_wrong_dtype(tmp_path):
    np.save(tmp_path / "bad.npy", np.zeros(4, np.float64))
    r = launch(tmp_path, "relocated.mlir", "scale", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               extra=[f"--reloc=host.coeffs={tmp_path / 'bad.npy'}"])
    assert ("relocation record 'host.coeffs' (memref<4xf32>) needs dtype f4"
            in r.stderr)
    r = launch(tmp_path, "relocated.mlir", "scale", 1, 64,
               [np.zeros(4, np.float32), "index:4"], expect=1,
               extra=[f"--reloc=host.coeffs={tmp_path / 'bad.npy'}", "--abi=v1"])
    assert "does not match relocation record 'host.coeffs'" in r.stderr


def test_float_atomics_native_and_emulated(tmp_path):
    # 4096 threads add into 3 global words and per-block workgroup sums: the
    # SPV_EXT_shader_atomic_float_add path and the compare-exchange emulation
    # both lose no update.
    n = 4096
    x = RNG.integers(-8, 8, n).astype(np.float32)  # exact in any order
    expected = np.array([x[k::3].sum() for k in range(3)] + [x.sum()],
                        np.float32)
    for extra in ([], ["--emulate-float-atomics"]):
        out = launch(tmp_path / (extra[0][2:] if extra else "native"),
                     "atomic_contention.mlir", "accumulate", n // 64, 64,
                     [x, np.zeros(4, np.float32), f"index:{n}"], extra=extra)
        np.testing.assert_array_equal(out[1], expected)


def test_seed_v2_shape_raised_runs_with_gradient(tmp_path):
    # The v2 declaration shape, raised by reloc-raise through gv_to_value,
    # runs on the device with the host object given at launch, and so does
    # its gradient (dA <- 2 A W dA: the object is constant, inactive).
    raised = tmp_path / "raised.mlir"
    run([tool("nabla-opt"), os.path.join(CORPUS, "seed_shape_v2.mlir"),
         "--reloc-raise", "-o", str(raised)])
    w = np.array([0.5, -1.0, 2.0, 4.0], np.float32)
    np.save(tmp_path / "w.npy", w)
    reloc = [f"--reloc=Main.weights={tmp_path / 'w.npy'}"]
    a = RNG.standard_normal(70).astype(np.float32)
    wi = w[np.arange(70) % 4]
    launcher = [tool("nabla-run"), str(raised)]
    out = launch(tmp_path / "primal", None, "f_kernel", 2, 64, [a, "index:70"],
                 extra=reloc, launcher=launcher)
    np.testing.assert_allclose(out[0], a * a * wi, rtol=1e-6)
    seed = RNG.standard_normal(70).astype(np.float32)
    out = launch(tmp_path / "grad", None, "f_grad", 2, 64,
                 [a, seed, "index:70"], extra=reloc, launcher=launcher)
    np.testing.assert_allclose(out[1], 2 * a * wi * seed, rtol=1e-5)


def test_bitwise_integer_atomics(tmp_path):
    v = RNG.integers(0, 1 << 30, 100).astype(np.int32)
    acc = np.array([0x1234, 0, -1, 0, 3], np.int32)
    out = launch(tmp_path, "bitwise_atomics.mlir", "bits", 2, 64,
                 [acc, v, "index:100"])
    # Products wrap modulo 2^32 in any order.
    product = 3
    for x in v.tolist():
        product = product * x % 2 ** 32
    np.testing.assert_array_equal(
        out[0], [np.bitwise_xor.reduce(v) ^ 0x1234, np.bitwise_or.reduce(v),
                 np.bitwise_and.reduce(v), 7,
                 np.array(product, np.uint32).view(np.int32)])


def test_sign_extended_comparisons(tmp_path):
    # corpus/i64_compare.mlir: lavapipe miscompiled a sign-extended value
    # compared with an i64 constant (always false for negative values).
    N = np.array([-6, -1, 5, 7, -2**31, 2**31 - 1, 0, -3, 6, -4], np.int32)
    M = np.array([0, 0, 10, 3, -5, 0, 1, -4, 6, 2**40], np.int64)
    out = launch(tmp_path, "i64_compare.mlir", "k", 2, 8,
                 [N, M, np.zeros(len(N), np.int32), f"index:{len(N)}"])
    w = N.astype(np.int64)
    expected = ((w < M) | (w < 0) << 1 | (w >= 5) << 2 | (-3 > w) << 3
                | (w.astype(np.uint64) < 7) << 4)
    np.testing.assert_array_equal(out[2], expected.astype(np.int32))



def test_bit_counts(tmp_path):
    a = RNG.integers(-2 ** 31, 2 ** 31, 100).astype(np.int32)
    a[:4] = [0, -1, -2 ** 31, 1]
    z = np.zeros(100, np.int32)
    out = launch(tmp_path, "bit_counts.mlir", "counts", 2, 64,
                 [a, z, z, z, "index:100"])
    bits = a.view(np.uint32).astype(np.uint64)
    pop = np.array([bin(v).count("1") for v in bits])
    lead = np.array([32 - int(v).bit_length() for v in bits])
    trail = np.array([(int(v) & -int(v)).bit_length() - 1 if v else 32
                      for v in bits])
    np.testing.assert_array_equal(out[1], pop)
    np.testing.assert_array_equal(out[2], lead)
    np.testing.assert_array_equal(out[3], trail)


def test_bit_counts_64(tmp_path):
    """__popcll, __clzll and __ffsll's cttz: the two 32-bit halves' counts
    combined on SPIR-V (a low or high half of zero, both, all ones)."""
    a = RNG.integers(-2 ** 63, 2 ** 63, 100, dtype=np.int64)
    a[:7] = [0, -1, -2 ** 63, 1, 1 << 40, (1 << 32) - 1, 5 << 32]
    z = np.zeros(100, np.int64)
    out = launch(tmp_path, "bit_counts.mlir", "counts64", 2, 64,
                 [a, z, z, z, "index:100"])
    bits = [int(v) for v in a.view(np.uint64)]
    pop = np.array([bin(v).count("1") for v in bits])
    lead = np.array([64 - v.bit_length() for v in bits])
    trail = np.array([(v & -v).bit_length() - 1 if v else 64 for v in bits])
    np.testing.assert_array_equal(out[1], pop)
    np.testing.assert_array_equal(out[2], lead)
    np.testing.assert_array_equal(out[3], trail)
