# ===- nabla/_timing.py - Kernel times of repeated launches -------------=== #
#
# What `run(..., repeat=N, times=True)` returns beside the outputs: the
# kernel's time in each repeat from the device's clock, and the transfers'
# host wall times (`KernelTimes`); and the check of `repeat` and `times`
# against the runtime's limit on repeats.
#
# ===----------------------------------------------------------------------=== #
import statistics

import numpy as np

from . import _nabla

# Most repeats of one launch (kMaxLaunchRepeat).
_MAX_REPEAT = _nabla.limits["launch_repeat"]


class KernelTimes:
    """The times of one launch repeated `repeat` times, in nanoseconds.

    `kernel_ns`: the kernel's time in each repeat, from the device's clock
    around the dispatch only (Vulkan timestamp queries, CUDA/HIP events);
    `min_ns`, `median_ns`, `max_ns` summarize it. `first_launch_ns`: the
    device time of an untimed launch before the repeats, which includes the
    driver's work on a kernel's first use (lavapipe compiles the pipeline on
    the first dispatch: ~1 ms against a ~40 us kernel). Transfers are apart, host
    wall time: `upload_ns` (writing every input before each repeat),
    `download_ns` (reading the buffers back after the last), and
    `launch_wall_ns` the whole launch (device objects, pipeline or module,
    uploads, repeats, read-back). `backend` and `device` name the device."""

    def __init__(self, measured):
        self.kernel_ns = [float(t) for t in measured["kernel_ns"]]
        self.first_launch_ns = float(measured["first_launch_ns"])
        self.upload_ns = [float(t) for t in measured["upload_ns"]]
        self.download_ns = float(measured["download_ns"])
        self.launch_wall_ns = float(measured["launch_wall_ns"])
        self.backend = measured["backend"]
        self.device = measured["device"]

    @property
    def repeat(self):
        return len(self.kernel_ns)

    @property
    def min_ns(self):
        return min(self.kernel_ns)

    @property
    def median_ns(self):
        return statistics.median(self.kernel_ns)

    @property
    def max_ns(self):
        return max(self.kernel_ns)

    def __repr__(self):
        return (f"<nabla.KernelTimes {self.repeat} x on {self.backend}: "
                f"kernel min {self.min_ns / 1e3:.3g} us, median "
                f"{self.median_ns / 1e3:.3g} us, max {self.max_ns / 1e3:.3g} us>")


def _repeat(repeat, times):
    if (isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer))
            or not 1 <= repeat <= _MAX_REPEAT):
        raise ValueError(f"repeat must be an integer from 1 to {_MAX_REPEAT}, "
                         f"got {repeat!r}")
    if not isinstance(times, bool):
        raise TypeError(f"times must be True or False, got {times!r}")
    return int(repeat)
