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
import json
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
    manifest = json.loads(compiled.manifest_text)
    for binding in manifest["kernels"][0]["bindings"]:
        if binding["param"] == 1:
            binding["binding"] = 5
    edited = nabla.CompileResult(compiled.artifacts, json.dumps(manifest))
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
