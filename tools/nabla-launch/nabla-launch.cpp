//===- nabla-launch.cpp - Launch a kernel from a nabla-compile directory --===//
//
// nabla-launch DIR --kernel=NAME --grid=X[,Y,Z] --block=X[,Y,Z] [--arg=SPEC]...
// (and the other flags of launchFlagsHelp(); --help, --version).
// Runs a precompiled kernel (DIR holds manifest.json and the artifacts). It
// links no MLIR or LLVM, so it runs where only a GPU driver is installed.
// Exit status: 0 success, 1 error, 2 usage error.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Launcher.h"

#include <fstream>
#include <iostream>
#include <iterator>

using namespace nabla::runtime;

static bool readFile(const std::string &path, std::string &contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  contents.assign(std::istreambuf_iterator<char>(in),
                  std::istreambuf_iterator<char>());
  return true;
}

static const char *const kUsage =
    "usage: nabla-launch DIR --kernel=NAME --grid=X[,Y,Z] --block=X[,Y,Z] "
    "[--arg=SPEC]... [options]\n";

static void printHelp() {
  std::cout
      << "nabla-launch: launch a kernel compiled by nabla-compile\n\n"
      << kUsage
      << "\nRuns kernel NAME from DIR (a nabla-compile output directory: "
         "manifest.json and the\nartifacts it lists), then writes every "
         "buffer parameter k to arg<k>.npy in the --out\ndirectory. Links "
         "no MLIR or LLVM: it runs where only a GPU driver is installed.\n"
         "\nOPTIONS:\n"
      << launchFlagsHelp()
      << "  --help                 print this help and exit\n"
         "  --version              print the version and exit\n"
         "\nEXIT STATUS: 0 success, 1 error, 2 usage error.\n"
         "\nEXAMPLE:\n"
         "  nabla-compile examples/mul_kernel.mlir --target=spirv --block=64 "
         "-o out\n"
         "  nabla-launch out --kernel=mul_kernel --grid=1 --block=64 "
         "--arg=a.npy --arg=index:16 --out=result\n";
}

static int usage(const std::string &message) {
  std::cerr << "nabla-launch: " << message << "\n"
            << kUsage << launchFlagsHelp();
  return 2;
}

int main(int argc, char **argv) {
  LaunchOptions options;
  std::vector<std::string> positional, unknown;
  std::string error;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      printHelp();
      return 0;
    }
    if (arg == "--version") {
      std::cout << "nabla-launch (Nabla) " NABLA_VERSION "\n";
      return 0;
    }
  }
  if (!parseLaunchFlags(argc, argv, options, positional, unknown, error))
    return usage(error);
  if (!unknown.empty())
    return usage("unknown option '" + unknown.front() + "'");
  if (positional.size() != 1)
    return usage("expected one nabla-compile output directory");
  if (options.kernel.empty() || !options.hasGrid || !options.hasBlock)
    return usage("--kernel, --grid and --block are required");

  const std::string &dir = positional.front();
  std::string text;
  if (!readFile(dir + "/manifest.json", text)) {
    std::cerr << "error: cannot read '" << dir << "/manifest.json'\n";
    return 1;
  }
  Manifest manifest;
  if (!parseManifest(text, manifest, error)) {
    std::cerr << "error: " << dir << "/manifest.json: " << error << "\n";
    return 1;
  }
  std::map<std::string, std::vector<uint8_t>> artifacts;
  for (const auto &[module, files] : manifest.modules)
    for (const std::string &file : files) {
      std::string bytes;
      if (!readFile(dir + "/" + file, bytes)) {
        std::cerr << "error: cannot read '" << dir << "/" << file << "'\n";
        return 1;
      }
      artifacts[file].assign(bytes.begin(), bytes.end());
    }

  std::unique_ptr<Device> device =
      openDevice(resolveTarget(options), options.device, error);
  if (!device) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }
  return runKernel(*device, manifest, artifacts, options);
}
