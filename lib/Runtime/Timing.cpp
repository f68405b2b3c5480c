//===- Timing.cpp - Kernel and transfer times of a launch -----------------===//
//
// Summaries of a timed launch and the two ways the tools print them: text
// for people and one JSON line for scripts (bench/, the tests).
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Timing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace nabla::runtime;

TimeSummary nabla::runtime::summarizeTimes(std::vector<double> samples) {
  TimeSummary summary;
  if (samples.empty())
    return summary;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  summary.min = samples.front();
  summary.max = samples.back();
  summary.median =
      n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return summary;
}

/// "27.3 us": three significant digits in the largest unit that keeps the
/// value at or above 1.
static std::string formatDuration(double ns) {
  static const struct {
    double scale;
    const char *unit;
  } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
  for (const auto &u : units)
    if (std::fabs(ns) >= u.scale || u.scale == 1) {
      char text[64];
      std::snprintf(text, sizeof(text), "%.3g %s", ns / u.scale, u.unit);
      return text;
    }
  return "";
}

static std::string formatSummary(const std::vector<double> &samples) {
  TimeSummary s = summarizeTimes(samples);
  return "min " + formatDuration(s.min) + ", median " +
         formatDuration(s.median) + ", max " + formatDuration(s.max);
}

std::string nabla::runtime::formatTimingText(const TimingSubject &subject,
                                             const LaunchTiming &timing) {
  size_t repeats = timing.kernelNs.size();
  std::string text = "timing: kernel '" + subject.kernel + "' on " +
                     subject.backend + " (" + subject.device + "), " +
                     std::to_string(repeats) +
                     (repeats == 1 ? " repeat\n" : " repeats\n");
  auto line = [&](const char *label, const std::string &value) {
    text += std::string("  ") + label + value + "\n";
  };
  line("kernel (device clock):          ", formatSummary(timing.kernelNs));
  if (timing.firstLaunchNs >= 0)
    line("first launch (device clock):    ",
         formatDuration(timing.firstLaunchNs) +
             " (not in the repeats: includes the driver's work on first "
             "use)");
  line("upload (host wall, per repeat): ", formatSummary(timing.uploadNs));
  line("read-back (host wall):          ", formatDuration(timing.downloadNs));
  line("whole launch (host wall):       ", formatDuration(timing.launchWallNs));
  return text;
}

/// A JSON string literal for `text` (control characters escaped).
static std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", u);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// Whole nanoseconds: finer digits are below every device clock's
/// resolution.
static std::string jsonNumber(double ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f", std::isfinite(ns) ? ns : 0.0);
  return text;
}

static std::string jsonArray(const std::vector<double> &samples) {
  std::string out = "[";
  for (size_t i = 0; i < samples.size(); ++i)
    out += (i ? "," : "") + jsonNumber(samples[i]);
  return out + "]";
}

std::string nabla::runtime::formatTimingJson(const TimingSubject &subject,
                                             const LaunchTiming &timing) {
  TimeSummary kernel = summarizeTimes(timing.kernelNs);
  return "{\"kernel\":" + jsonString(subject.kernel) +
         ",\"backend\":" + jsonString(subject.backend) +
         ",\"device\":" + jsonString(subject.device) +
         ",\"repeat\":" + std::to_string(timing.kernelNs.size()) +
         ",\"kernel_ns\":" + jsonArray(timing.kernelNs) +
         ",\"kernel_ns_min\":" + jsonNumber(kernel.min) +
         ",\"kernel_ns_median\":" + jsonNumber(kernel.median) +
         ",\"kernel_ns_max\":" + jsonNumber(kernel.max) +
         ",\"first_launch_ns\":" +
         (timing.firstLaunchNs >= 0 ? jsonNumber(timing.firstLaunchNs)
                                    : std::string("null")) +
         ",\"upload_ns\":" + jsonArray(timing.uploadNs) +
         ",\"download_ns\":" + jsonNumber(timing.downloadNs) +
         ",\"launch_wall_ns\":" + jsonNumber(timing.launchWallNs) + "}";
}
