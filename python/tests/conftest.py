# ===- conftest.py - Python package tests run under Vulkan validation ----=== #
#
# Launches from these tests run in process under the Khronos validation layer
# with synchronization validation (NABLA_VULKAN_VALIDATION=1,
# docs/Runtime.md): a validation message makes the call raise RuntimeError.
# Since a test may expect an error anyway, each test's captured stderr is
# also searched for the runtime's message prefix: a message fails the test,
# unless it is marked `vulkan_validation_messages` (it provokes them on
# purpose). The summary states the count. NABLA_VULKAN_VALIDATION=0 in the
# environment turns validation off (to measure its cost).
# ===----------------------------------------------------------------------=== #
import os
import sys

import pytest

PREFIX = "nabla: vulkan validation: "
os.environ.setdefault("NABLA_VULKAN_VALIDATION", "1")

_tally = {"messages": 0}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "vulkan_validation_messages: the test provokes Vulkan "
        "validation messages on purpose")


@pytest.fixture(autouse=True)
def _no_validation_messages(request, capfd):
    yield
    out, err = capfd.readouterr()
    # Give the output back to pytest's report.
    sys.stdout.write(out)
    sys.stderr.write(err)
    if request.node.get_closest_marker("vulkan_validation_messages"):
        return
    messages = [line for line in err.splitlines() if line.startswith(PREFIX)]
    _tally["messages"] += len(messages)
    if messages:
        pytest.fail(f"{len(messages)} Vulkan validation message(s):\n"
                    + "\n".join(messages), pytrace=False)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"Vulkan validation (NABLA_VULKAN_VALIDATION="
        f"{os.environ.get('NABLA_VULKAN_VALIDATION', '')}): "
        f"{_tally['messages']} messages")
