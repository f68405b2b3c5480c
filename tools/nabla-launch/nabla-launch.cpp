//===- nabla-launch.cpp - Launch a kernel from a nabla-compile directory --===//
//
// nabla-launch DIR --kernel=NAME --grid=X[,Y,Z] --block=X[,Y,Z] [--arg=SPEC]...
// (and the other flags of launchFlagsHelp(); --help, --version).
// Runs a precompiled kernel (DIR holds manifest.json and the artifacts). It
// links no MLIR or LLVM, so it runs where only a GPU driver is installed.
// Exit status: 0 success, 1 error, 2 usage error.
//
//===----------------------------------------------------------------------===//

#include "LaunchCommandLine.h"
#include "nabla/Runtime/Files.h"

#include <csignal>
#include <cstring>
#include <exception>
#include <iostream>
#include <unistd.h>

using namespace nabla::runtime;

/// The last line of defence (nabla-launch links no LLVM, so not
/// nabla::installToolGuard): a crash or an uncaught exception ends as an
/// internal error with exit status 1, never a core dump.
[[noreturn]] static void exitInternalError(const char *reason) {
  static const char prefix[] = "nabla-launch: internal error: ";
  (void)!::write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
  (void)!::write(STDERR_FILENO, reason, std::strlen(reason));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(1);
}

static void onCrashSignal(int) {
  exitInternalError("the tool crashed; please report it with the input and "
                    "command line that caused it");
}

static void installToolGuard() {
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(signal, onCrashSignal);
  std::set_terminate([] {
    if (std::exception_ptr current = std::current_exception()) {
      try {
        std::rethrow_exception(current);
      } catch (const std::exception &e) {
        exitInternalError(e.what());
      } catch (...) {
      }
    }
    exitInternalError("uncaught exception");
  });
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
         "buffer parameter k to arg<k>.npy in the --out\ndirectory (--repeat: "
         "N launches, each from the same inputs; --time: print the\nkernel's "
         "device-measured time).\nLinks "
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
         "--arg=a.npy --arg=index:16 --out=result\n"
         "  nabla-launch out --kernel=mul_kernel --grid=1 --block=64 "
         "--arg=a.npy --arg=index:16 --repeat=20 --time\n";
}

static int usage(const std::string &message) {
  std::cerr << "nabla-launch: " << message << "\n"
            << kUsage << launchFlagsHelp();
  return 2;
}

int main(int argc, char **argv) {
  installToolGuard();
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
  if (!readFile(dir + "/manifest.json", text, error)) {
    std::cerr << "error: " << error << "\n";
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
      if (!readFile(dir + "/" + file, bytes, error)) {
        std::cerr << "error: " << error << "\n";
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
