# ===- test_vulkan_validation.py - NABLA_VULKAN_VALIDATION fails runs ----=== #
#
# The switch that every other integration test runs under (conftest.py):
# a launch the validation layer rejects exits with status 1 and the layer's
# message on stderr, even where the runtime itself would not notice (here a
# hand-edited manifest whose binding numbers disagree with the SPIR-V); a
# correct launch prints nothing; a malformed switch or a missing layer is an
# error, never a run without validation.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import json
import os
import subprocess

import numpy as np
import pytest

PREFIX = "nabla: vulkan validation: "
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
SEED = os.path.join(ROOT, "examples", "mul_kernel.mlir")


def launch(directory, tmp_path, **env):
    """nabla-launch of mul_kernel on 8 elements under `env`."""
    np.save(tmp_path / "a.npy", np.arange(8, dtype=np.float32))
    return subprocess.run(
        [os.path.join(BIN, "nabla-launch"), str(directory), "--kernel=mul_kernel",
         "--grid=1", "--block=8", f"--arg={tmp_path / 'a.npy'}", "--arg=index:8",
         f"--out={tmp_path}"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "NABLA_VULKAN_VALIDATION": "1", **env})


@pytest.fixture
def compiled(tmp_path):
    out = tmp_path / "compiled"
    subprocess.run([os.path.join(BIN, "nabla-compile"), SEED, "--target=spirv",
                    "--block=8", f"-o={out}"], check=True, timeout=300)
    return out


def test_clean_launch_reports_nothing(compiled, tmp_path):
    result = launch(compiled, tmp_path)
    assert result.returncode == 0, result.stderr
    assert PREFIX not in result.stderr
    assert np.array_equal(np.load(tmp_path / "arg0.npy"),
                          np.arange(8, dtype=np.float32) ** 2)


@pytest.mark.vulkan_validation_messages
def test_validation_message_fails_the_launch(compiled, tmp_path):
    # The shader reads the scalar at binding 5 instead of 1 (its Binding
    # decoration rewritten; still valid SPIR-V): the pipeline layout, made
    # from the parameters, does not match the shader. The launch stops
    # before dispatching.
    spv = next(compiled.glob("*.spv"))
    words = np.frombuffer(spv.read_bytes(), dtype="<u4").copy()
    i, rewritten = 5, 0
    while i < len(words):
        count, opcode = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        # OpDecorate %target Binding 1
        if opcode == 71 and count == 4 and words[i + 2] == 33 and words[i + 3] == 1:
            words[i + 3] = 5
            rewritten += 1
        i += max(count, 1)
    assert rewritten >= 1  # every variable aliasing binding 1
    spv.write_bytes(words.tobytes())
    result = launch(compiled, tmp_path)
    assert result.returncode == 1, result.stderr
    assert (PREFIX + "error [VUID-VkComputePipelineCreateInfo-layout-00703]: "
            in result.stderr)
    assert ("Vulkan validation reported 1 message during pipeline "
            "creation for kernel 'mul_kernel', the first "
            "VUID-VkComputePipelineCreateInfo-layout-00703" in result.stderr)
    assert not (tmp_path / "arg0.npy").exists()


def test_missing_layer_is_an_error(compiled, tmp_path):
    # The loader looks for explicit layers in this empty folder only.
    (tmp_path / "no-layers").mkdir()
    result = launch(compiled, tmp_path, VK_LAYER_PATH=str(tmp_path / "no-layers"))
    assert result.returncode == 1
    assert ("error: NABLA_VULKAN_VALIDATION=1, but the Vulkan loader finds no "
            "VK_LAYER_KHRONOS_validation (install vulkan-validationlayers, or "
            "unset NABLA_VULKAN_VALIDATION to run without validation)"
            in result.stderr)


def test_malformed_switch_is_an_error(compiled, tmp_path):
    result = launch(compiled, tmp_path, NABLA_VULKAN_VALIDATION="on")
    assert result.returncode == 1
    assert ("error: NABLA_VULKAN_VALIDATION must be 1 (validate) or 0/unset "
            "(do not validate), not 'on'" in result.stderr)
