//===- TimingTest.cpp - Launch timing summaries, output and flags ---------===//
//
// The min/median/max of a timed launch (the median of an even count is the
// mean of the middle two, as Python's statistics.median), the JSON line
// scripts parse (units in the keys, strings escaped), the text report, and
// the --repeat/--time flags with their bounds.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Timing.h"
#include "LaunchCommandLine.h"

#include "gtest/gtest.h"

using namespace nabla::runtime;

namespace {

TEST(TimingTest, SummaryOfOddAndEvenCounts) {
  TimeSummary odd = summarizeTimes({30, 10, 20});
  EXPECT_EQ(odd.min, 10);
  EXPECT_EQ(odd.median, 20);
  EXPECT_EQ(odd.max, 30);
  TimeSummary even = summarizeTimes({40, 10, 30, 20});
  EXPECT_EQ(even.median, 25);
  TimeSummary empty = summarizeTimes({});
  EXPECT_EQ(empty.median, 0);
}

TEST(TimingTest, JsonLineNamesUnitsAndEscapes) {
  LaunchTiming timing;
  timing.kernelNs = {1500.4, 1000, 2000};
  timing.uploadNs = {10, 11, 12};
  timing.downloadNs = 7;
  timing.launchWallNs = 123456;
  std::string json = formatTimingJson({"k", "vulkan", "dev \"x\"\\\n"}, timing);
  EXPECT_EQ(json, "{\"kernel\":\"k\",\"backend\":\"vulkan\",\"device\":"
                  "\"dev \\\"x\\\"\\\\\\u000a\",\"repeat\":3,"
                  "\"kernel_ns\":[1500,1000,2000],\"kernel_ns_min\":1000,"
                  "\"kernel_ns_median\":1500,\"kernel_ns_max\":2000,"
                  "\"first_launch_ns\":null,\"upload_ns\":[10,11,12],\"download_ns\":7,"
                  "\"launch_wall_ns\":123456}");
  EXPECT_EQ(json.find('\n'), std::string::npos);
}

TEST(TimingTest, TextReportsEveryPart) {
  LaunchTiming timing;
  timing.kernelNs = {27300, 25100, 40200};
  timing.uploadNs = {900, 1000, 1100};
  timing.downloadNs = 1830;
  timing.launchWallNs = 2.65e6;
  timing.firstLaunchNs = 912000;
  std::string text = formatTimingText({"mul_kernel", "vulkan", "dev"}, timing);
  EXPECT_NE(text.find("first launch (device clock):    912 us (not in the "
                      "repeats"),
            std::string::npos);
  EXPECT_NE(text.find("kernel 'mul_kernel' on vulkan (dev), 3 repeats"),
            std::string::npos);
  EXPECT_NE(text.find("kernel (device clock):          min 25.1 us, median "
                      "27.3 us, max 40.2 us"),
            std::string::npos);
  EXPECT_NE(text.find("read-back (host wall):          1.83 us"),
            std::string::npos);
  EXPECT_NE(text.find("whole launch (host wall):       2.65 ms"),
            std::string::npos);
}

/// parseLaunchFlags on `flags` (argv[0] added).
bool parse(std::vector<std::string> flags, LaunchOptions &options,
           std::string &error) {
  flags.insert(flags.begin(), "tool");
  std::vector<char *> argv;
  for (std::string &flag : flags)
    argv.push_back(flag.data());
  std::vector<std::string> positional, unknown;
  return parseLaunchFlags(argv.size(), argv.data(), options, positional,
                          unknown, error);
}

TEST(TimingTest, RepeatAndTimeFlags) {
  LaunchOptions options;
  std::string error;
  ASSERT_TRUE(parse({}, options, error));
  EXPECT_EQ(options.repeat, 1u);
  EXPECT_EQ(options.timeFormat, "");
  ASSERT_TRUE(parse({"--repeat=100000", "--time"}, options, error));
  EXPECT_EQ(options.repeat, 100000u);
  EXPECT_EQ(options.timeFormat, "text");
  ASSERT_TRUE(parse({"--time=json"}, options, error));
  EXPECT_EQ(options.timeFormat, "json");
  for (const char *bad : {"--repeat=0", "--repeat=100001", "--repeat=-1",
                          "--repeat=", "--repeat=2x", "--repeat=1e3",
                          "--repeat=99999999999999999999"}) {
    LaunchOptions fresh;
    EXPECT_FALSE(parse({bad}, fresh, error)) << bad;
    EXPECT_NE(error.find("malformed --repeat"), std::string::npos) << bad;
  }
  for (const char *bad : {"--time=xml", "--time="}) {
    LaunchOptions fresh;
    EXPECT_FALSE(parse({bad}, fresh, error)) << bad;
    EXPECT_NE(error.find("malformed --time="), std::string::npos) << bad;
  }
}

} // namespace
