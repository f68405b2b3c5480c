# ===- test_timing.py - Kernel times of nabla-run and nabla-launch ------=== #
#
# `--repeat=N --time=json` on the default device (lavapipe without a GPU):
# one JSON line with N device-measured kernel times (timestamp queries around
# the dispatch), min <= median <= max, all positive, N upload times and the
# read-back; repeats start from the same inputs, so the outputs are one
# launch's; a kernel doing ~10^5 dependent steps per thread takes clearly
# longer than the same kernel doing one (medians, a factor far below the
# measured one, so that a busy machine cannot fail it). Never an absolute time.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration -k timing
# ===----------------------------------------------------------------------=== #
import json
import os
import statistics
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
CORPUS = os.path.join(ROOT, "test", "Integration", "corpus")


def tool(name):
    return os.path.join(BIN, name)


def run(args, expect=0):
    result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert result.returncode == expect, (
        f"{' '.join(map(str, args))} exited {result.returncode}, expected "
        f"{expect}\nstdout: {result.stdout}\nstderr: {result.stderr}")
    return result


def timing_json(stdout):
    """The one JSON line --time=json prints (after any --print lines)."""
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0])


def check_times(times, repeat, kernel):
    assert times["kernel"] == kernel
    assert times["backend"] == "vulkan" and times["device"]
    assert times["repeat"] == repeat
    samples = times["kernel_ns"]
    assert len(samples) == repeat and len(times["upload_ns"]) == repeat
    assert all(t > 0 for t in samples)
    assert (times["kernel_ns_min"] <= times["kernel_ns_median"]
            <= times["kernel_ns_max"])
    assert times["kernel_ns_min"] == min(samples)
    assert times["kernel_ns_max"] == max(samples)
    assert abs(times["kernel_ns_median"] - statistics.median(samples)) <= 1
    assert all(t >= 0 for t in times["upload_ns"]) and times["download_ns"] >= 0
    # The first launch, with the driver's work on first use, is apart.
    assert times["first_launch_ns"] > 0
    # The host's wall time of the launch holds every device interval.
    assert times["launch_wall_ns"] >= max(samples) + times["first_launch_ns"]


def spin(tmp_path, steps, extra=(), launcher=None):
    """Runs corpus/timing.mlir's @spin (steps*steps multiply-adds per
    thread) with --time=json; returns (times, output)."""
    x = np.linspace(-0.9, 0.9, 256, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / f"out{steps}"
    command = launcher or [tool("nabla-run"), os.path.join(CORPUS, "timing.mlir")]
    r = run(command + ["--kernel=spin", "--grid=4", "--block=64",
                       f"--arg={tmp_path / 'x.npy'}", f"--arg=index:{steps}",
                       "--arg=index:256", f"--out={out}"] + list(extra))
    return r, x, np.load(out / "arg0.npy")


def reference(x, steps):
    acc = x.astype(np.float64)
    for _ in range(steps * steps):
        acc = acc * x + 1
    return acc


def test_repeat_time_json(tmp_path):
    r, x, out = spin(tmp_path, 1, ["--repeat=5", "--time=json"])
    check_times(timing_json(r.stdout), 5, "spin")
    # The kernel updates X in place; every repeat starts from the input.
    np.testing.assert_allclose(out, reference(x, 1), rtol=1e-5, atol=1e-6)


def test_more_work_takes_longer(tmp_path):
    # 250 * 250 ~ 6 * 10^4 dependent steps per thread against 1 (under
    # lavapipe's 65535 loop iterations per thread: 320 * 320 was cut short
    # there, unnoticed until the loop-limit check); 5x leaves room for a
    # loaded machine.
    trivial = timing_json(spin(tmp_path, 1, ["--repeat=5", "--time=json"])[0].stdout)
    r, x, out = spin(tmp_path, 250, ["--repeat=5", "--time=json"])
    busy = timing_json(r.stdout)
    check_times(busy, 5, "spin")
    assert busy["kernel_ns_median"] > 5 * trivial["kernel_ns_median"], (
        trivial, busy)
    np.testing.assert_allclose(out, reference(x, 250), rtol=1e-4, atol=1e-5)


def test_outputs_independent_of_repeat(tmp_path):
    # The seed kernel squares in place: 7 repeats still give A*A, not A^128.
    a = np.linspace(-1.5, 1.5, 100, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    outputs = {}
    for repeat in (1, 7):
        out = tmp_path / f"out{repeat}"
        run([tool("nabla-run"), os.path.join(CORPUS, "seed_primal.mlir"),
             "--kernel=mul_kernel", "--grid=2", "--block=64",
             f"--arg={tmp_path / 'a.npy'}", "--arg=index:100", f"--out={out}",
             f"--repeat={repeat}"])
        outputs[repeat] = np.load(out / "arg0.npy")
    np.testing.assert_array_equal(outputs[1], a * a)
    np.testing.assert_array_equal(outputs[7], outputs[1])


def test_time_text(tmp_path):
    r, _, _ = spin(tmp_path, 1, ["--repeat=3", "--time"])
    lines = r.stdout.splitlines()
    assert lines[0].startswith("timing: kernel 'spin' on vulkan (")
    assert lines[0].endswith("), 3 repeats")
    assert lines[1].startswith("  kernel (device clock):")
    assert "min " in lines[1] and ", median " in lines[1] and ", max " in lines[1]
    assert lines[2].startswith("  first launch (device clock):")
    assert "not in the repeats" in lines[2]
    assert lines[3].startswith("  upload (host wall, per repeat): min ")
    assert lines[4].startswith("  read-back (host wall):")
    assert lines[5].startswith("  whole launch (host wall):")


def test_time_without_repeat_and_with_print(tmp_path):
    # One sample by default; --print's lines come first, the JSON line last.
    r, _, _ = spin(tmp_path, 1, ["--time=json", "--print"])
    assert r.stdout.splitlines()[0].startswith("arg0 = [")
    assert r.stdout.splitlines()[-1].startswith("{")
    check_times(timing_json(r.stdout), 1, "spin")


def test_nabla_launch_times(tmp_path):
    compiled = tmp_path / "spirv"
    run([tool("nabla-compile"), os.path.join(CORPUS, "timing.mlir"),
         "--target=spirv", "--block=64", "-o", str(compiled)])
    r, x, out = spin(tmp_path, 2, ["--repeat=4", "--time=json"],
                     launcher=[tool("nabla-launch"), str(compiled)])
    check_times(timing_json(r.stdout), 4, "spin")
    np.testing.assert_allclose(out, reference(x, 2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("tool_name", ["nabla-run", "nabla-launch"])
@pytest.mark.parametrize("flag,message", [
    ("--repeat=0", "malformed --repeat '0' (expected 1 to 100000)"),
    ("--repeat=100001", "malformed --repeat '100001'"),
    ("--time=csv", "malformed --time=csv"),
])
def test_usage_errors(tmp_path, tool_name, flag, message):
    target = (os.path.join(CORPUS, "timing.mlir") if tool_name == "nabla-run"
              else str(tmp_path))
    r = run([tool(tool_name), target, "--kernel=spin", "--grid=1",
             "--block=64", flag], 2)
    assert message in r.stderr
