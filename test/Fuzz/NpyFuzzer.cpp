//===- NpyFuzzer.cpp - Fuzz target: the runtime's .npy reader -------------===//
//
// nabla-fuzz-npy: parses the input as a .npy file (parseNpy, what readNpy
// does after reading the file). An accepted array must be self-consistent,
// since nabla-run copies `data` to the device and indexes elements up to
// numElements(): an element count that overflows, or data that is not
// exactly numElements() * elementSize() bytes, is a finding. Accepted arrays
// are written back with writeNpy and must read back identically.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace nabla::runtime;

[[noreturn]] static void finding(const std::string &what) {
  std::fprintf(stderr, "==nabla-fuzz== FINDING: %s\n", what.c_str());
  std::abort();
}

static std::string scratchFile;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  static char directory[] = "/tmp/nabla-fuzz-npy-XXXXXX";
  if (!mkdtemp(directory)) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  scratchFile = std::string(directory) + "/array.npy";
  std::atexit([] {
    std::remove(scratchFile.c_str());
    rmdir(scratchFile.substr(0, scratchFile.rfind('/')).c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  NpyArray array;
  std::string error;
  if (!parseNpy(bytes, "input.npy", array, error))
    return 0;
  if (array.dtype != "f4" && array.dtype != "f8" && array.dtype != "i4" &&
      array.dtype != "i8")
    finding("accepted dtype '" + array.dtype + "'");
  uint64_t elements = 1;
  for (int64_t extent : array.shape) {
    if (extent < 0)
      finding("accepted a negative extent");
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(extent),
                               &elements) ||
        elements > static_cast<uint64_t>(INT64_MAX))
      finding("accepted a shape whose element count overflows");
  }
  uint64_t dataBytes;
  if (__builtin_mul_overflow(elements, uint64_t(array.elementSize()),
                             &dataBytes))
    finding("accepted a shape whose byte size overflows");
  if (static_cast<uint64_t>(array.numElements()) != elements ||
      dataBytes != array.data.size())
    finding("accepted " + std::to_string(array.data.size()) +
            " data bytes for " + std::to_string(elements) + " elements of " +
            array.dtype);

  if (!writeNpy(scratchFile, array, error))
    finding("cannot write back an accepted array: " + error);
  NpyArray again;
  if (!readNpy(scratchFile, again, error))
    finding("an accepted array, written back, does not read: " + error);
  if (again.dtype != array.dtype || again.shape != array.shape ||
      again.data != array.data)
    finding("an accepted array reads back differently");
  return 0;
}
