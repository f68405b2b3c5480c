# ===- conftest.py - Integration tests run under Vulkan validation -------=== #
#
# Every tool these tests start runs its Vulkan launches under the Khronos
# validation layer with synchronization validation (NABLA_VULKAN_VALIDATION=1,
# docs/Runtime.md): a validation message fails the launch (exit status 1).
# Since a test that expects exit status 1 would hide such a failure, every
# tool's captured stderr is also searched for the runtime's message prefix: a
# message fails the test that caused it, unless the test is marked
# `vulkan_validation_messages` (it provokes them on purpose). The summary
# states the count. NABLA_VULKAN_VALIDATION=0 in the environment turns
# validation off (to measure its cost).
# ===----------------------------------------------------------------------=== #
import os
import subprocess

import pytest

PREFIX = "nabla: vulkan validation: "
os.environ.setdefault("NABLA_VULKAN_VALIDATION", "1")

_unchecked_run = subprocess.run
_tally = {"runs": 0, "messages": 0}


def _checked_run(*args, **kwargs):
    """subprocess.run, failing the test on a validation message."""
    result = _unchecked_run(*args, **kwargs)
    _tally["runs"] += 1
    stderr = result.stderr
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    messages = [line for line in (stderr or "").splitlines()
                if line.startswith(PREFIX)]
    if messages:
        _tally["messages"] += len(messages)
        pytest.fail(f"{len(messages)} Vulkan validation message(s):\n"
                    + "\n".join(messages), pytrace=False)
    return result


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "vulkan_validation_messages: the test provokes Vulkan "
        "validation messages on purpose")


@pytest.fixture(autouse=True)
def _no_validation_messages(request, monkeypatch):
    if request.node.get_closest_marker("vulkan_validation_messages") is None:
        monkeypatch.setattr(subprocess, "run", _checked_run)
    yield


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"Vulkan validation (NABLA_VULKAN_VALIDATION="
        f"{os.environ.get('NABLA_VULKAN_VALIDATION', '')}): "
        f"{_tally['messages']} messages in {_tally['runs']} tool runs")
