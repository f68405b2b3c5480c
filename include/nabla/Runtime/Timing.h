//===- Timing.h - Kernel and transfer times of a launch ---------*- C++ -*-===//
//
// What a timed launch measures and how the tools print it. Kernel times come
// from the device's own clock around the dispatch only (Vulkan timestamp
// queries, CUDA/HIP events); transfers to and from the device are host wall
// time and reported apart, so neither pollutes the other. docs/Runtime.md
// says what each back end's measured interval holds.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_TIMING_H
#define NABLA_RUNTIME_TIMING_H

#include <chrono>
#include <string>
#include <vector>

namespace nabla::runtime {

/// The times of one launch repeated `kernelNs.size()` times, in nanoseconds.
struct LaunchTiming {
  /// Device-measured kernel time of each repeat.
  std::vector<double> kernelNs;
  /// Device-measured time of the untimed first launch that precedes the
  /// repeats: a kernel's first dispatch includes the driver's work on first
  /// use (lavapipe compiles the pipeline then, ~1 ms against a ~40 us
  /// kernel; CUDA loads modules lazily), which the repeats do not. Negative
  /// when there was none.
  double firstLaunchNs = -1;
  /// Host wall time of writing every input to the device before each repeat
  /// (the first upload, then the restores that make repeats identical).
  std::vector<double> uploadNs;
  /// Host wall time of reading the buffers back after the last repeat.
  double downloadNs = 0;
  /// Host wall time of the whole launch: device objects, module or pipeline,
  /// every upload, repeat and wait, the read-back. Set by the caller of
  /// Device::launch.
  double launchWallNs = 0;
};

/// Minimum, median (the mean of the two middle samples for an even count)
/// and maximum of a non-empty sample.
struct TimeSummary {
  double min = 0, median = 0, max = 0;
};
TimeSummary summarizeTimes(std::vector<double> samples);

/// Nanoseconds of host wall time since `start`.
inline double elapsedNs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Who ran the timed launch, for the report.
struct TimingSubject {
  std::string kernel, backend, device;
};

/// A few human-readable lines (kernel min/median/max, transfers, the whole
/// launch), each ending in a newline.
std::string formatTimingText(const TimingSubject &subject,
                             const LaunchTiming &timing);

/// One line of JSON (no newline): every sample and the kernel summary, each
/// key naming its unit (`kernel_ns_median`, `download_ns`, ...).
std::string formatTimingJson(const TimingSubject &subject,
                             const LaunchTiming &timing);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_TIMING_H
