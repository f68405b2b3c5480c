//===- LaunchArgsFuzzer.cpp - Fuzz target: launch flags and arguments -----===//
//
// nabla-fuzz-launch-args: what nabla-launch does between its command line and
// the driver. The input is a manifest.json, then one command-line argument
// per line starting at the first line that begins with `--` (`--kernel=k`,
// `--grid=4`, `--arg=a.npy`, `--arg=index:16`, `--reloc=KEY=b.npy`...). The
// flags are parsed (parseLaunchFlags), the manifest read (parseManifest), and
// runKernel loads and checks every argument against the kernel's parameters
// and launchKernel runs on a stand-in device: host memory in place of device
// memory, every copy checked to stay inside its objects (the arguments'
// buffers, the patched relocation objects' globals and copies), every
// allocation and module released; the device then declines to launch, so
// nothing is ever written.
// Buffer arguments name the arrays this target writes at start-up into a
// scratch directory (kArrays: a.npy is f32[16], b.npy f64[4,4]...); paths
// with `/` are skipped.
//
//===----------------------------------------------------------------------===//

#include "LaunchCommandLine.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
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
/// The stand-in device: host memory in place of device memory, checked on
/// every access, so that launchKernel's allocation, argument packing and
/// patching run for real; then it declines the launch.
class StandInDevice : public Device {
public:
  StandInDevice(std::string backend, const Manifest &manifest)
      : manifest(manifest) {
    deviceInfo.backend = std::move(backend);
    deviceInfo.name = "fuzz stand-in";
    deviceInfo.dynamicSharedMemoryAtLaunch = deviceInfo.backend != "vulkan";
  }
  ~StandInDevice() override {
    if (!memory.empty())
      finding("launchKernel left " + std::to_string(memory.size()) +
              " allocations behind");
    if (modules)
      finding("launchKernel left a module loaded");
  }
  const DeviceInfo &info() const override { return deviceInfo; }

  Expected<void *> loadModule(const ModuleImage &image) override {
    if (!image.data)
      finding("a module was loaded without an image");
    ++modules;
    return static_cast<void *>(&modules);
  }
  Error unloadModule(void *) override {
    if (!modules--)
      finding("a module was unloaded twice");
    return Error::success();
  }
  Expected<void *> getFunction(void *, const std::string &name) override {
    if (!manifest.findKernel(name))
      finding("launchKernel looked up '" + name + "', which is no kernel");
    return static_cast<void *>(&modules);
  }
  /// A global exactly as large as its record's object.
  Expected<GlobalSymbol> getGlobal(void *, const std::string &symbol) override {
    for (const RelocationInfo &record : manifest.relocations) {
      if (record.symbol != symbol || record.strategy != "patch")
        continue;
      int64_t count = 1;
      for (int64_t extent : record.shape)
        count *= extent < 0 ? 0 : extent;
      NpyArray shape;
      shape.dtype = dtypeForElementType(record.element);
      size_t bytes = record.pointer ? 8 : size_t(count) * shape.elementSize();
      Expected<void *> global = allocate(bytes, nullptr, false);
      globals.push_back(*global);
      return GlobalSymbol{*global, bytes};
    }
    finding("launchKernel looked up @" + symbol + ", which is no patch");
  }
  Error launch(void *, const LaunchConfig &config, void **args,
               size_t count) override {
    for (size_t k = 0; k < count; ++k)
      if (!args[k])
        finding("a null argument pointer reached the launch");
    if (config.grid.product() == 0 || config.block.product() == 0)
      finding("an empty grid or block reached the launch");
    return makeError("not launched (fuzzing)");
  }

  Expected<void *> createStream() override { return makeError("no streams"); }
  Error destroyStream(void *) override { return makeError("no streams"); }
  Error synchronize(void *) override { return Error::success(); }
  Expected<void *> createEvent() override { return makeError("no events"); }
  Error destroyEvent(void *) override { return makeError("no events"); }
  Error recordEvent(void *, void *) override { return makeError("no events"); }
  Error waitEvent(void *, void *) override { return makeError("no events"); }
  Error synchronizeEvent(void *) override { return makeError("no events"); }

  Expected<void *> allocate(uint64_t bytes, void *, bool) override {
    auto block = std::make_unique<std::vector<uint8_t>>(bytes ? bytes : 1);
    void *pointer = block->data();
    memory[reinterpret_cast<uintptr_t>(pointer)] = std::move(block);
    return pointer;
  }
  Error free(void *pointer, void *) override {
    if (!memory.erase(reinterpret_cast<uintptr_t>(pointer)))
      finding("launchKernel freed memory it did not allocate");
    return Error::success();
  }
  Error copy(void *to, const void *from, size_t bytes, void *) override {
    bool toDevice = inside(to, bytes), fromDevice = inside(from, bytes);
    if (!toDevice && !fromDevice)
      finding("a copy of " + std::to_string(bytes) +
              " bytes touches no device object or overruns one");
    std::memmove(to, from, bytes);
    return Error::success();
  }
  Error fill(void *, uint32_t, unsigned, size_t, void *) override {
    finding("launchKernel filled memory");
  }
  Error registerHostMemory(void *, uint64_t) override {
    return Error::success();
  }
  Error unregisterHostMemory(void *) override { return Error::success(); }

  /// Frees the globals (a real module owns them).
  void releaseGlobals() {
    for (void *global : globals)
      memory.erase(reinterpret_cast<uintptr_t>(global));
    globals.clear();
  }

private:
  bool inside(const void *pointer, size_t bytes) const {
    auto at = reinterpret_cast<uintptr_t>(pointer);
    auto it = memory.upper_bound(at);
    if (it == memory.begin())
      return false;
    --it;
    return at + bytes <= it->first + it->second->size();
  }

  const Manifest &manifest;
  DeviceInfo deviceInfo;
  std::map<uintptr_t, std::unique_ptr<std::vector<uint8_t>>> memory;
  std::vector<void *> globals;
  int modules = 0;
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
  StandInDevice device(resolveTarget(options), manifest);
  if (runKernel(device, manifest, artifacts, options) == 0)
    finding("runKernel succeeded although the device declined");
  device.releaseGlobals();
  return 0;
}
