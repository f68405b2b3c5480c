# ===- test_module_globals.py - Module-scope device memory ----------------=== #
#
# frontends/module_globals.cu: `__constant__` and `__device__` tables and
# counters at module scope, compiled by clang-22 at -O1/-O2/-O3 during the
# run. On lavapipe (SPIR-V) every such global is a buffer the runtime owns
# while the module is loaded (nabla-bind-module-globals): primal against
# float64 NumPy, gradients through the tables against the analytic ones, the
# retirement counter of a single-pass reduction, tickets from a counter that
# `--repeat` starts again from its initial value. Every kernel compiles for
# NVVM, ROCDL, SPIR-V and Metal; a differentiated value stored into a
# `__device__` variable is a located error (module_global_refused.cu).
# ===----------------------------------------------------------------------=== #
import json
import os
import re
import subprocess

import numpy as np
import pytest

from frontend_helpers import (BIN, check, compile_cuda, compile_for_target,
                              f32, mangled, needs_cuda_headers, run)

RNG = np.random.default_rng(1906)
OPTS = [1, 2, 3]


def big_table():
    """g_big: 0.5 + 0.25 k for its first 4160 elements, then zeros."""
    table = np.zeros(5000)
    table[:4160] = 0.5 + 0.25 * np.arange(4160)
    return table


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("n,grid,block", [(300, 3, 128), (1, 1, 32),
                                          (0, 1, 32)])
def test_constant_table_and_device_gain(tmp_path, opt, n, grid, block):
    ll = compile_cuda(tmp_path, "module_globals", opt)
    x = RNG.uniform(-2, 2, max(n, 1))
    scale = 0.5 + 0.25 * (np.arange(x.size) & 127)
    out = run(tmp_path, ll, "scaled_kernel", grid, block,
              [f32(x), f32(np.zeros(x.size)), f"i32:{n}"])
    check(out[1][:n], (2 * x * x * scale)[:n], rtol=1e-5, atol=1e-6)
    dy = RNG.standard_normal(x.size)
    out = run(tmp_path, ll, "grad_scaled", grid, block,
              [f32(x), f32(np.zeros(x.size)), f32(np.zeros(x.size)),
               f32(dy), f"i32:{n}"])
    check(out[1][:n], (4 * x * scale * dy)[:n], rtol=1e-5, atol=1e-5)
    assert not out[1][n:].any()


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_gather_from_a_table_over_4096_elements(tmp_path, opt):
    ll = compile_cuda(tmp_path, "module_globals", opt)
    n = 700
    x = RNG.uniform(-2, 2, n)
    # Both ends of the table, the generated part and the zeros.
    index = np.concatenate([[0, 4095, 4096, 4159, 4160, 4999],
                            RNG.integers(0, 5000, n - 6)]).astype(np.int32)
    table = big_table()
    out = run(tmp_path, ll, "gathered_kernel", 6, 128,
              [f32(x), index, f32(np.zeros(n)), f"i32:{n}"])
    check(out[2], np.sin(x) * table[index], rtol=1e-5, atol=1e-5)
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_gathered", 6, 128,
              [f32(x), f32(np.zeros(n)), index, f32(np.zeros(n)), f32(dy),
               f"i32:{n}"])
    check(out[1], np.cos(x) * table[index] * dy, rtol=1e-4, atol=1e-4)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("n,grid", [(200, 4), (64, 1), (130, 3)])
def test_retirement_counter(tmp_path, opt, n, grid):
    """threadFenceReduction: the last block to take a ticket from the
    `__device__` counter adds every block's partial; repeats reuse the
    module (the kernel resets the counter itself)."""
    ll = compile_cuda(tmp_path, "module_globals", opt)
    x = RNG.uniform(-1, 1, n)
    for repeat in ["1", "3"]:
        out = run(tmp_path, ll, "reduce_single_pass", grid, 64,
                  [f32(x), f32(np.zeros(grid)), f32(np.zeros(1)),
                   f"i32:{n}"], extra=[f"--repeat={repeat}"])
        check(out[2], [x.sum()], rtol=1e-5, atol=1e-5)
        check(out[1], [x[b * 64:(b + 1) * 64].sum() for b in range(grid)],
              rtol=1e-5, atol=1e-5)


@needs_cuda_headers
@pytest.mark.parametrize("repeat", [1, 4])
def test_counter_starts_from_its_initializer(tmp_path, repeat):
    """A counter nobody resets hands out 0..n-1 in a launch: with repeats,
    each repeat starts from the initial contents again, as every buffer
    does."""
    ll = compile_cuda(tmp_path, "module_globals", 2)
    n = 150
    out = run(tmp_path, ll, "take_tickets", 3, 64,
              [np.zeros(n, np.uint32), f"i32:{n}"],
              extra=[f"--repeat={repeat}"])
    np.testing.assert_array_equal(np.sort(out[0]), np.arange(n))


@needs_cuda_headers
def test_stored_differentiated_value_is_refused(tmp_path):
    ll = compile_cuda(tmp_path, "module_global_refused", 2)
    np.save(tmp_path / "x.npy", f32(np.zeros(64)))
    result = subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll),
         f"--kernel={mangled(ll, 'grad_exchanged')}", "--grid=1",
         "--block=64"] + [f"--arg={tmp_path / 'x.npy'}"] * 4,
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert re.search(r"module_global_refused\.O2\.ll:\d+:\d+: error: "
                     r"'memref\.store' op stores a differentiated value into "
                     r"module global @g_stash \(a `__device__` variable\), "
                     r"which AD gives no shadow", result.stderr), result.stderr


@needs_cuda_headers
@pytest.mark.parametrize("target", ["nvvm", "rocdl", "spirv", "metal"])
def test_compiles_for_every_target(tmp_path, target):
    """SPIR-V and Metal bind each global after the kernel's parameters (the
    manifest says which, with the contents); SPIR-V validated by spirv-val,
    NVVM assembled by ptxas."""
    for opt in OPTS:
        ll = compile_cuda(tmp_path, "module_globals", opt)
        result, manifest = compile_for_target(ll, target,
                                              tmp_path / f"O{opt}-{target}")
        assert manifest, f"-O{opt}: {result.stderr}"
        if target in ("nvvm", "rocdl"):
            assert "module_globals" not in manifest
            continue
        globals_ = manifest["module_globals"]["kernels"]
        buffers = {b["name"]: b for b in globals_["buffers"]}
        assert buffers["g_big"]["count"] == 5000
        assert buffers["c_scale"]["constant"]
        assert not buffers["retirementCount"]["constant"]
        kernels = {k["name"]: k for k in manifest["kernels"]}
        bound = globals_["kernels"][mangled(ll, "grad_scaled")]
        assert sorted(bound) == ["c_scale", "g_gain"]
        bindings = kernels[mangled(ll, "grad_scaled")]["bindings"]
        assert [b.get("global") for b in bindings[-2:]] == bound


def global_bindings(manifest, kernel):
    """The "global" bindings of `kernel` in `manifest`."""
    entry = next(e for e in manifest["kernels"] if e["name"] == kernel)
    return [b for b in entry["bindings"] if b["kind"] == "global"]


@needs_cuda_headers
@pytest.mark.parametrize("damage,message", [
    (lambda m, k: m["module_globals"]["kernels"]["buffers"][0].update(
        data="zz"), "\"data\" must be a string of hex digits"),
    (lambda m, k: m["module_globals"]["kernels"]["buffers"][0].update(
        data="00" * 100000), "at most \"bytes\" of them"),
    (lambda m, k: m["module_globals"]["kernels"]["kernels"][k].append(
        "nowhere"), "names a global the buffers do not have"),
    (lambda m, k: global_bindings(m, k)[0].update({"global": "other"}),
     "do not follow the launch convention"),
])
def test_malformed_module_globals_are_refused(tmp_path, damage, message):
    """nabla-launch checks the manifest's module globals before a driver
    sees them: malformed contents, unknown names and bindings that do not
    match the record are errors naming the problem."""
    ll = compile_cuda(tmp_path, "module_globals", 2)
    out = tmp_path / "spirv"
    result, manifest = compile_for_target(ll, "spirv", out)
    assert manifest, result.stderr
    kernel = mangled(ll, "scaled_kernel")
    damage(manifest, kernel)
    (out / "manifest.json").write_text(json.dumps(manifest))
    x = f32(np.ones(64))
    np.save(tmp_path / "x.npy", x)
    result = subprocess.run(
        [os.path.join(BIN, "nabla-launch"), str(out), f"--kernel={kernel}",
         "--grid=1", "--block=64", f"--arg={tmp_path / 'x.npy'}",
         f"--arg={tmp_path / 'x.npy'}", "--arg=i32:64",
         f"--out={tmp_path / 'res'}"], capture_output=True, text=True,
        timeout=300)
    assert result.returncode == 1, result.stderr
    assert message in result.stderr, result.stderr
