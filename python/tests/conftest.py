# ===- conftest.py - Python package tests run under Vulkan validation ----=== #
#
# Launches from these tests run in process under the Khronos validation layer
# (test/Pytest/vulkan_validation.py holds the logic, shared with
# test/Integration/conftest.py): a validation message makes the call raise
# RuntimeError. Since a test may expect an error anyway, each test's captured
# stderr is also searched for the runtime's message prefix, unless the test
# is marked `vulkan_validation_messages`. The summary states the count.
# ===----------------------------------------------------------------------=== #
import os
import sys

import pytest

# The kernel cache is off unless a test turns it on (test_kernel_cache.py,
# with its own NABLA_CACHE_DIR): tests neither write the user's cache nor
# depend on what an earlier run left in it.
os.environ["NABLA_NO_CACHE"] = "1"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "test", "Pytest"))

# pytest_configure is a hook: importing it here registers the marker.
from vulkan_validation import (  # noqa: E402,F401
    expects_messages, fail_on_messages, pytest_configure, write_summary)


@pytest.fixture(autouse=True)
def _no_validation_messages(request, capfd):
    yield
    out, err = capfd.readouterr()
    # Give the output back to pytest's report.
    sys.stdout.write(out)
    sys.stderr.write(err)
    if not expects_messages(request):
        fail_on_messages(err)


def pytest_terminal_summary(terminalreporter):
    write_summary(terminalreporter, count_tool_runs=False)
