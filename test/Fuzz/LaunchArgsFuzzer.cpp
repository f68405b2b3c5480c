//===- LaunchArgsFuzzer.cpp - Fuzz target: launch flags and arguments -----===//
//
// nabla-fuzz-launch-args: what nabla-launch does between its command line and
// the driver. The input is a manifest.json, then one command-line argument
// per line starting at the first line that begins with `--` (`--kernel=k`,
// `--grid=4`, `--arg=a.npy`, `--arg=index:16`, `--reloc=KEY=b.npy`...). The
// flags are parsed (parseLaunchFlags), the manifest read (parseManifest), and
// runKernel loads and checks every argument against the kernel's parameters
// and hands them to a stand-in device. That device packs the CUDA/HIP
// argument list (packLLVMArguments) and writes and reads the patched
// relocation objects through a stand-in driver that checks every copy stays
// inside its objects, then declines to launch, so nothing is ever written.
// Buffer arguments name the arrays this target writes at start-up into a
// scratch directory (kArrays: a.npy is f32[16], b.npy f64[4,4]...); paths
// with `/` are skipped.
//
//===----------------------------------------------------------------------===//

#include "LLVMArguments.h"
#include "nabla/Runtime/Launcher.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

using namespace nabla::runtime;

[[noreturn]] static void finding(const std::string &what) {
  std::fprintf(stderr, "==nabla-fuzz== FINDING: %s\n", what.c_str());
  std::abort();
}

static std::string scratch;

namespace {
/// The stand-in device: exercises what the back ends do with the parameters
/// and patch objects before any driver call, then declines the launch.
class StandInDevice : public Device {
public:
  explicit StandInDevice(std::string backendName)
      : backendName(std::move(backendName)) {}
  std::string backend() const override { return backendName; }
  std::string name() const override { return "fuzz stand-in"; }
  std::string chip() const override { return ""; }
  unsigned subgroupSize() const override { return 32; }

  bool launch(const LaunchSpec &spec, std::vector<HostParam> &params,
              std::string &error) override {
    if (!spec.kernel || !spec.image)
      finding("runKernel launched without a kernel or an image");
    for (const HostParam &param : params) {
      if (!param.info)
        finding("a parameter without its manifest entry reached the device");
      if (param.info->isBuffer &&
          param.buffer.data.size() !=
              size_t(param.buffer.numElements()) * param.buffer.elementSize())
        finding("a buffer whose bytes disagree with its shape reached the "
                "device");
    }
    std::vector<uint64_t> pointers(params.size(), 0x1000);
    PackedArguments packed;
    if (packLLVMArguments(*spec.kernel, params, pointers, packed, error) &&
        packed.pointers.size() != spec.kernel->arguments.size())
      finding("packLLVMArguments packed " +
              std::to_string(packed.pointers.size()) + " of " +
              std::to_string(spec.kernel->arguments.size()) + " arguments");

    // A driver whose globals are exactly as large as the objects.
    std::map<uint64_t, std::vector<uint8_t>> memory;
    uint64_t next = 0x10000;
    GlobalPatcher patcher;
    patcher.lookup = [&](const std::string &symbol, uint64_t &address,
                         size_t &bytes, std::string &) {
      for (const PatchObject &patch : spec.patches)
        if (patch.symbol == symbol) {
          bytes = patch.pointer ? 8 : patch.object->data.size();
          address = next;
          memory[next] = std::vector<uint8_t>(bytes);
          next += 0x10000;
          return true;
        }
      finding("writePatches looked up '" + symbol + "', which is no patch");
    };
    patcher.allocate = [&](size_t bytes, uint64_t &address, std::string &) {
      address = next;
      memory[next] = std::vector<uint8_t>(bytes);
      next += 0x10000;
      return true;
    };
    patcher.copyToDevice = [&](uint64_t to, const void *from, size_t bytes,
                               std::string &) {
      auto it = memory.find(to);
      if (it == memory.end() || it->second.size() < bytes)
        finding("a patch copy overruns its device object");
      std::memcpy(it->second.data(), from, bytes);
      return true;
    };
    patcher.copyToHost = [&](void *to, uint64_t from, size_t bytes,
                             std::string &) {
      auto it = memory.find(from);
      if (it == memory.end() || it->second.size() < bytes)
        finding("a patch read-back overruns its device object");
      std::memcpy(to, it->second.data(), bytes);
      return true;
    };
    std::vector<uint64_t> locations, allocations;
    if (writePatches(patcher, spec.patches, locations, allocations, error))
      (void)readPatches(patcher, spec.patches, locations, error);
    error = "not launched (fuzzing)";
    return false;
  }

private:
  std::string backendName;
};
} // namespace

/// The arrays buffer arguments may name: file, dtype, shape.
static const struct {
  const char *name, *dtype;
  std::vector<int64_t> shape;
} kArrays[] = {
    {"a.npy", "f4", {16}}, {"b.npy", "f8", {4, 4}}, {"c.npy", "i4", {8}},
    {"d.npy", "i8", {3}},  {"e.npy", "f4", {}},     {"z.npy", "f4", {0}},
    {"r.npy", "f4", {4}},  {"m.npy", "f4", {2, 8}}, {"w.npy", "f8", {4, 8}}};

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  static char directory[] = "/tmp/nabla-fuzz-launch-XXXXXX";
  if (!mkdtemp(directory)) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  scratch = directory;
  for (const auto &spec : kArrays) {
    NpyArray array;
    array.dtype = spec.dtype;
    array.shape = spec.shape;
    array.data.assign(size_t(array.numElements()) * array.elementSize(), 0x3f);
    std::string error;
    if (!writeNpy(scratch + "/" + spec.name, array, error)) {
      std::fprintf(stderr, "nabla-fuzz-launch-args: %s\n", error.c_str());
      std::exit(1);
    }
  }
  std::atexit([] {
    for (const auto &spec : kArrays)
      std::remove((scratch + "/" + spec.name).c_str());
    rmdir(scratch.c_str());
  });
  // runKernel reports every rejection on std::cerr: keep the fuzzer quiet.
  std::cerr.rdbuf(nullptr);
  return 0;
}

/// The smallest valid Vulkan compute module (an empty `main`): the runtime
/// validates a .spv object before the launch, and this target's subject is
/// what comes after. Other objects are opaque bytes to the runtime.
static const uint32_t kEmptyComputeModule[] = {
    0x07230203, 0x00010300, 0x00070000, 0x00000005, 0x00000000, 0x00020011,
    0x00000001, 0x0003000e, 0x00000000, 0x00000001, 0x0005000f, 0x00000005,
    0x00000001, 0x6e69616d, 0x00000000, 0x00060010, 0x00000001, 0x00000011,
    0x00000001, 0x00000001, 0x00000001, 0x00020013, 0x00000002, 0x00030021,
    0x00000003, 0x00000002, 0x00050036, 0x00000002, 0x00000001, 0x00000000,
    0x00000003, 0x000200f8, 0x00000004, 0x000100fd, 0x00010038};

/// Points a buffer spec at the scratch directory; false for a path.
static bool relocate(std::string &spec) {
  if (spec.find('/') != std::string::npos)
    return false;
  spec = scratch + "/" + spec;
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  size_t flagsAt = text.rfind("--", 0) == 0 ? 0 : text.find("\n--");
  std::string manifestText =
      text.substr(0, flagsAt == std::string::npos ? text.size() : flagsAt);
  std::vector<std::string> arguments = {"nabla-launch"};
  if (flagsAt != std::string::npos) {
    size_t start = flagsAt + (flagsAt ? 1 : 0);
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos)
        end = text.size();
      if (end > start)
        arguments.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }
  std::vector<char *> argv;
  for (std::string &argument : arguments)
    argv.push_back(argument.data());

  LaunchOptions options;
  std::vector<std::string> positional, unknown;
  std::string error;
  if (!parseLaunchFlags(static_cast<int>(argv.size()), argv.data(), options,
                        positional, unknown, error)) {
    if (error.empty())
      finding("rejected the flags without saying why");
    return 0;
  }
  if (options.kernel.empty() || !options.hasGrid || !options.hasBlock)
    return 0;
  for (std::string &spec : options.args) {
    std::string type = spec.substr(0, spec.find(':'));
    bool scalar = spec.find(':') != std::string::npos &&
                  (type == "f32" || type == "f64" || type == "i32" ||
                   type == "i64" || type == "index");
    if (!scalar && !relocate(spec))
      return 0;
  }
  for (std::string &reloc : options.relocs) {
    size_t equals = reloc.find('=');
    std::string file = reloc.substr(equals + 1);
    if (!relocate(file))
      return 0;
    reloc = reloc.substr(0, equals + 1) + file;
  }

  Manifest manifest;
  if (!parseManifest(manifestText, manifest, error))
    return 0;
  std::map<std::string, std::vector<uint8_t>> artifacts;
  const auto *module = reinterpret_cast<const uint8_t *>(kEmptyComputeModule);
  for (const auto &[name, files] : manifest.modules)
    for (const std::string &file : files)
      artifacts[file].assign(module, module + sizeof(kEmptyComputeModule));
  StandInDevice device(resolveTarget(options));
  if (runKernel(device, manifest, artifacts, options) == 0)
    finding("runKernel succeeded although the device declined");
  return 0;
}
