//===- ReplayMain.cpp - Run a fuzz target over saved inputs ---------------===//
//
// The normal build (any compiler, no instrumentation) links each fuzz target
// with this main instead of libFuzzer's, so that ctest replays the seeds and
// every saved crasher on every CI run: each file argument, or each file of a
// directory argument (sorted), is fed once to LLVMFuzzerTestOneInput. A crash
// or a target's own abort fails the test; `scripts/fuzz.sh` does the fuzzing.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                         char ***argv);

namespace fs = std::filesystem;

/// Feeds the contents of `path` to the target; false if it cannot be read.
static bool replay(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return true;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    fs::path arg(argv[i]);
    std::vector<fs::path> files;
    if (fs::is_directory(arg, ec)) {
      for (fs::directory_iterator it(arg, ec), end; !ec && it != end;
           it.increment(ec))
        if (it->is_regular_file(ec) && it->path().filename() != "README.md")
          files.push_back(it->path());
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const fs::path &file : files) {
      if (!replay(file)) {
        std::fprintf(stderr, "replay: cannot read '%s'\n", file.c_str());
        return 2;
      }
      ++count;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return 0;
}
