# ===- vulkan_validation.py - Both pytest trees under Vulkan validation --=== #
#
# The logic shared by test/Integration/conftest.py and python/tests/conftest.py
# (each imports it; pytest runs the two trees separately, so neither sees the
# other's conftest). Every Vulkan launch the tests make runs under the Khronos
# validation layer with synchronization validation
# (NABLA_VULKAN_VALIDATION=1, docs/Runtime.md): a validation message fails
# the launch (a tool's exit status 1, a RuntimeError in process). Since a test
# may expect that failure anyway, the output is also searched for the
# runtime's message prefix: a message fails the test that caused it, unless
# the test is marked `vulkan_validation_messages` (it provokes them on
# purpose). The summary states the count. NABLA_VULKAN_VALIDATION=0 in the
# environment turns validation off (to measure its cost).
#
# How the output is found differs by tree: the integration tests start tools,
# so `checked_run` replaces subprocess.run and reads each tool's captured
# stderr; the package tests launch in process, so their conftest reads the
# test's captured stderr and passes it to `fail_on_messages`.
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import pytest

PREFIX = "nabla: vulkan validation: "
MARKER = "vulkan_validation_messages"
os.environ.setdefault("NABLA_VULKAN_VALIDATION", "1")

_unchecked_run = subprocess.run
_tally = {"runs": 0, "messages": 0}


def expects_messages(request):
    """Whether the test provokes validation messages on purpose."""
    return request.node.get_closest_marker(MARKER) is not None


def fail_on_messages(stderr):
    """Fails the running test if `stderr` holds validation messages."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    messages = [line for line in (stderr or "").splitlines()
                if line.startswith(PREFIX)]
    if messages:
        _tally["messages"] += len(messages)
        pytest.fail(f"{len(messages)} Vulkan validation message(s):\n"
                    + "\n".join(messages), pytrace=False)


def checked_run(*args, **kwargs):
    """subprocess.run, failing the test on a validation message."""
    result = _unchecked_run(*args, **kwargs)
    _tally["runs"] += 1
    fail_on_messages(result.stderr)
    return result


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{MARKER}: the test provokes Vulkan "
        "validation messages on purpose")


def write_summary(terminalreporter, count_tool_runs):
    """The summary line; `count_tool_runs` adds how many tools were run."""
    runs = f" in {_tally['runs']} tool runs" if count_tool_runs else ""
    terminalreporter.write_line(
        f"Vulkan validation (NABLA_VULKAN_VALIDATION="
        f"{os.environ.get('NABLA_VULKAN_VALIDATION', '')}): "
        f"{_tally['messages']} messages{runs}")
