//===- LaunchCommandLine.h - The shared front end of the launchers -*- C++
//-*-===//
//
// Command-line flags, argument files and their checks against the manifest,
// the launch (launchKernel, nabla/Runtime/KernelLaunch.h) and the output
// files: everything nabla-run and nabla-launch share. Exit status: 0
// success, 1 error, 2 usage error. Like the runtime it links no MLIR or
// LLVM (nabla-launch is runtime-only).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TOOLS_COMMON_LAUNCHCOMMANDLINE_H
#define NABLA_TOOLS_COMMON_LAUNCHCOMMANDLINE_H

#include "nabla/Runtime/Device.h"
#include "nabla/Runtime/KernelLaunch.h"
#include "nabla/Runtime/Manifest.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nabla::runtime {

struct LaunchOptions {
  std::string kernel;
  Dim3 grid, block;
  bool hasGrid = false, hasBlock = false;
  /// One SPEC per kernel parameter: PATH.npy or TYPE:VALUE.
  std::vector<std::string> args;
  /// KEY=FILE.npy relocation inputs.
  std::vector<std::string> relocs;
  std::string outDir = ".";
  /// "vulkan", "cuda", "hip" or "" (then $NABLA_TARGET, else vulkan).
  std::string target;
  /// Device index within the back end (-1: $NABLA_DEVICE, else preferred).
  int device = -1;
  /// Print every buffer's values after the launch.
  bool print = false;
  unsigned timeoutSeconds = 60;
  /// Launches of the kernel on the same device objects, each from the same
  /// inputs (see LaunchSpec::repeat).
  unsigned repeat = 1;
  /// "" (no timing), "text" or "json": how the kernel and transfer times are
  /// printed to stdout after the launch.
  std::string timeFormat;
  /// Bytes of dynamic shared memory (`extern __shared__`, CUDA's third
  /// launch parameter); -1 when not given.
  int64_t dynamicSharedMemory = -1;
  /// The most bytes a kernel's global-memory tape may take (0: the default).
  uint64_t maxTapeBytes = 0;
};

/// Parses the shared flags; leaves other arguments in `positional`, and flags
/// it does not know in `unknown`. Returns false with `error` on malformed
/// values (a usage error).
bool parseLaunchFlags(int argc, char **argv, LaunchOptions &options,
                      std::vector<std::string> &positional,
                      std::vector<std::string> &unknown, std::string &error);

/// The help text of the shared flags.
const char *launchFlagsHelp();

/// Parses a TYPE:VALUE scalar spec (f32, f64, i8, i16, i32, i64, index)
/// into `bytes` (at least 8), setting `size`; false with `error` for an
/// unknown type, a malformed value or one that does not fit.
bool parseScalarValue(const std::string &spec, unsigned char *bytes,
                      unsigned &size, std::string &error);

/// The back end to use: options.target, else $NABLA_TARGET, else "vulkan".
std::string resolveTarget(const LaunchOptions &options);

/// Loads the arguments, launches `options.kernel` from `artifacts` (file name
/// → bytes) described by `manifest`, and writes DIR/arg<k>.npy for every
/// buffer parameter. Prints messages to stderr; returns the exit status.
int runKernel(Device &device, const Manifest &manifest,
              const std::map<std::string, std::vector<uint8_t>> &artifacts,
              const LaunchOptions &options);

} // namespace nabla::runtime

#endif // NABLA_TOOLS_COMMON_LAUNCHCOMMANDLINE_H
