# ===- test_timing.py - Kernel times from nabla.run and nabla.Kernel -----=== #
#
# `repeat=N, times=True` returns (outputs, nabla.KernelTimes): N kernel times
# from the device's clock (lavapipe's timestamp queries here), positive,
# min <= median <= max, N uploads and a read-back; repeats start from the
# same inputs, so the outputs are one launch's; a kernel doing ~10^5 steps per
# thread takes clearly longer than one doing 1 (medians, never absolute
# times). Without `times` the result is the plain list, as before.
#
# Run: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
# ===----------------------------------------------------------------------=== #
import os
import statistics

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = open(os.path.join(ROOT, "examples", "mul_kernel.mlir")).read()
SPIN = open(os.path.join(ROOT, "test", "Integration", "corpus", "timing.mlir")).read()


def check(times, repeat):
    assert isinstance(times, nabla.KernelTimes)
    assert times.repeat == repeat == len(times.kernel_ns) == len(times.upload_ns)
    assert all(t > 0 for t in times.kernel_ns)
    assert times.min_ns <= times.median_ns <= times.max_ns
    assert times.median_ns == statistics.median(times.kernel_ns)
    # The untimed first launch (driver work on first use) is reported apart.
    assert times.first_launch_ns > 0
    assert times.download_ns >= 0
    assert times.launch_wall_ns >= times.max_ns + times.first_launch_ns
    assert times.backend == "vulkan" and times.device
    assert "median" in repr(times)


def test_run_returns_times():
    m = nabla.Module.parse(SEED)
    a = np.linspace(-1.5, 1.5, 100, dtype=np.float32)
    outputs, times = nabla.run(m, "mul_kernel", 2, 64, [a, 100], repeat=5,
                               times=True)
    check(times, 5)
    # mul_kernel squares in place; 5 repeats still give one launch's result.
    np.testing.assert_array_equal(outputs[0], a * a)


def test_plain_run_is_unchanged():
    m = nabla.Module.parse(SEED)
    a = np.linspace(-1.5, 1.5, 100, dtype=np.float32)
    outputs = nabla.run(m, "mul_kernel", 2, 64, [a, 100], repeat=3)
    assert isinstance(outputs, list) and outputs[1] is None
    np.testing.assert_array_equal(outputs[0], a * a)


def test_kernel_call_returns_times():
    square = nabla.Module.parse(SEED).kernel("mul_kernel")
    a = np.linspace(-1.5, 1.5, 100, dtype=np.float32)
    outputs, times = square(a, 100, grid=2, block=64, repeat=3, times=True)
    check(times, 3)
    np.testing.assert_array_equal(outputs[0], a * a)
    _, one = square(a, 100, grid=2, block=64, times=True)
    check(one, 1)


def test_more_work_takes_longer():
    spin = nabla.Module.parse(SPIN).kernel("spin")
    x = np.linspace(-0.9, 0.9, 256, dtype=np.float32)
    _, trivial = spin(x, 1, 256, grid=4, block=64, repeat=5, times=True)
    _, busy = spin(x, 250, 256, grid=4, block=64, repeat=5, times=True)
    # ~6 * 10^4 dependent steps per thread against 1 (under lavapipe's 65535
    # loop iterations per thread, Runtime.md *Loop limit*); 5x leaves room
    # for a loaded machine.
    assert busy.median_ns > 5 * trivial.median_ns, (trivial.kernel_ns,
                                                    busy.kernel_ns)


@pytest.mark.parametrize("repeat", [0, -1, 100001, 2.0, True, "3"])
def test_bad_repeat(repeat):
    m = nabla.Module.parse(SEED)
    with pytest.raises(ValueError, match="repeat must be an integer from 1 to 100000"):
        nabla.run(m, "mul_kernel", 1, 64, [np.zeros(4, np.float32), 4],
                  repeat=repeat)


def test_bad_times_flag():
    square = nabla.Module.parse(SEED).kernel("mul_kernel")
    with pytest.raises(TypeError, match="times must be True or False"):
        square(np.zeros(4, np.float32), 4, grid=1, block=64, times="yes")
