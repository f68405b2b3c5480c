# ===- test_vulkan_validation.py - Validation messages raise -------------=== #
#
# Under NABLA_VULKAN_VALIDATION=1 (conftest.py) a launch the validation layer
# rejects raises RuntimeError naming the layer's message, which is also
# printed on stderr; here a compilation whose manifest was edited so that a
# binding number disagrees with the SPIR-V, a mistake the runtime itself does
# not notice.
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = open(os.path.join(ROOT, "examples", "mul_kernel.mlir")).read()


@pytest.mark.vulkan_validation_messages
def test_validation_message_raises(capfd, monkeypatch):
    monkeypatch.setenv("NABLA_VULKAN_VALIDATION", "1")
    compiled = nabla.compile(nabla.Module.parse(SEED), target="spirv",
                             workgroup_size=8, kernel="mul_kernel")
    # The shader reads the scalar at binding 5 instead of 1 (its Binding
    # decorations rewritten; still valid SPIR-V): the pipeline layout, made
    # from the parameters, does not match it.
    artifacts = dict(compiled.artifacts)
    name = next(n for n in artifacts if n.endswith(".spv"))
    words = np.frombuffer(bytes(artifacts[name]), dtype="<u4").copy()
    i = 5
    while i < len(words):
        count, opcode = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        if opcode == 71 and count == 4 and words[i + 2] == 33 and words[i + 3] == 1:
            words[i + 3] = 5  # OpDecorate %v Binding 1
        i += max(count, 1)
    artifacts[name] = words.tobytes()
    edited = nabla.CompileResult(artifacts, compiled.manifest_text)
    a = np.arange(8, dtype=np.float32)
    with pytest.raises(RuntimeError, match=(
            "Vulkan validation reported 1 message during pipeline creation for "
            "kernel 'mul_kernel', the first "
            "VUID-VkComputePipelineCreateInfo-layout-00703")):
        nabla._launch(edited, "mul_kernel", [1, 1, 1], [8, 1, 1], [a, 8],
                      None, "vulkan", 60, None)
    assert ("nabla: vulkan validation: error "
            "[VUID-VkComputePipelineCreateInfo-layout-00703]"
            in capfd.readouterr().err)
