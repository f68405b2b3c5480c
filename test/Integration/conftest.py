# ===- conftest.py - Integration tests run under Vulkan validation -------=== #
#
# Every tool these tests start runs its Vulkan launches under the Khronos
# validation layer (test/Pytest/vulkan_validation.py holds the logic, shared
# with python/tests/conftest.py): a validation message fails the launch (exit
# status 1). Since a test that expects exit status 1 would hide such a
# failure, subprocess.run is replaced by one that also searches every tool's
# captured stderr for the runtime's message prefix, unless the test is marked
# `vulkan_validation_messages`. The summary states the count of messages and
# tool runs.
# ===----------------------------------------------------------------------=== #
import os
import subprocess
import sys

import pytest

# The kernel cache is off unless a test turns it on (test_kernel_cache.py,
# with its own NABLA_CACHE_DIR): tests neither write the user's cache nor
# depend on what an earlier run left in it.
os.environ["NABLA_NO_CACHE"] = "1"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "Pytest"))

# pytest_configure is a hook: importing it here registers the marker.
from vulkan_validation import (  # noqa: E402,F401
    checked_run, expects_messages, pytest_configure, write_summary)


@pytest.fixture(autouse=True)
def _no_validation_messages(request, monkeypatch):
    if not expects_messages(request):
        monkeypatch.setattr(subprocess, "run", checked_run)
    yield


def pytest_terminal_summary(terminalreporter):
    write_summary(terminalreporter, count_tool_runs=True)
