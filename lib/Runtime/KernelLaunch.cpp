//===- KernelLaunch.cpp - Launch one compiled kernel with host data -------===//
//
// Written once for every device. A buffer parameter gets device memory
// (at least 16 bytes, so that empty arrays have a distinct pointer) and is
// passed as its memref descriptor: allocated and aligned pointer the same
// device address, offset 0, the sizes from the array's shape and the
// row-major strides; scalars as their value. Kernels compiled for NVVM and
// ROCDL list these arguments in the manifest; for SPIR-V they follow from the
// parameters, and the manifest's bindings are checked against the Vulkan
// device's convention (binding k is parameter k, then the size bindings).
//
// Objects of `patch` relocation records are written into their module
// globals: a memref record's bytes into the global itself (the sizes must
// agree), a pointer record's bytes into a new device allocation whose address
// goes into the slot.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/KernelLaunch.h"
#include "nabla/Runtime/TapeSize.h"

#include "SPIRVCheck.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>

using namespace nabla::runtime;

int64_t HostParam::scalarAsInteger() const {
  int64_t value = 0;
  if (scalarBytes == 1) {
    int8_t v;
    std::memcpy(&v, scalar, 1);
    value = v;
  } else if (scalarBytes == 2) {
    int16_t v;
    std::memcpy(&v, scalar, 2);
    value = v;
  } else if (scalarBytes == 4) {
    int32_t v;
    std::memcpy(&v, scalar, 4);
    value = v;
  } else if (scalarBytes == 8) {
    std::memcpy(&value, scalar, 8);
  }
  return value;
}

bool nabla::runtime::checkDynamicSharedMemory(const KernelInfo &kernel,
                                              int64_t bytes,
                                              std::string &error) {
  // SPIR-V has the size compiled in; CUDA and HIP take it at launch.
  if (!kernel.dynamicSharedMemory)
    return true;
  if (bytes < 0) {
    error = "kernel '" + kernel.name +
            "' uses dynamic shared memory (extern __shared__): give the "
            "launch's size with --dynamic-shared-memory=BYTES (Python: "
            "shared_memory=BYTES)";
    return false;
  }
  if (*kernel.dynamicSharedMemory >= 0 &&
      *kernel.dynamicSharedMemory != bytes) {
    error = "kernel '" + kernel.name + "' was compiled for " +
            std::to_string(*kernel.dynamicSharedMemory) +
            " bytes of dynamic shared memory; launch with that "
            "--dynamic-shared-memory or recompile with "
            "--dynamic-shared-memory=" +
            std::to_string(bytes);
    return false;
  }
  return true;
}

std::vector<KernelParam> nabla::runtime::kernelABI(const KernelInfo &kernel) {
  std::vector<KernelParam> abi;
  for (const ParamInfo &info : kernel.params) {
    KernelParam param;
    param.buffer = info.isBuffer;
    param.type = info.isBuffer ? info.element : info.type;
    param.shape = info.shape;
    param.strided =
        info.isBuffer && (info.type.find("strided<") != std::string::npos ||
                          info.type.find("affine_map<") != std::string::npos);
    abi.push_back(std::move(param));
  }
  return abi;
}

namespace {

/// The flat LLVM arguments of `abi`: the manifest's list where it has one
/// (NVVM, ROCDL), else the memref ABI's.
std::vector<ArgumentInfo> llvmArguments(const KernelInfo &kernel,
                                        const std::vector<KernelParam> &abi) {
  if (!kernel.arguments.empty())
    return kernel.arguments;
  std::vector<ArgumentInfo> arguments;
  for (unsigned k = 0; k < abi.size(); ++k) {
    if (!abi[k].buffer) {
      arguments.push_back({k, "value", abi[k].type, -1});
      continue;
    }
    for (const char *field : {"allocated", "aligned", "offset"})
      arguments.push_back({k, field, "", -1});
    for (const char *field : {"size", "stride"})
      for (int d = 0; d < abi[k].rank(); ++d)
        arguments.push_back({k, field, "i64", d});
  }
  return arguments;
}

/// Checks that the manifest's SPIR-V bindings (if any) are those the Vulkan
/// device makes from the arguments.
Error checkBindings(const KernelInfo &kernel,
                    const std::vector<KernelParam> &abi,
                    const std::vector<std::string> &globals, bool prints) {
  if (kernel.bindings.empty())
    return Error::success();
  std::vector<BindingInfo> expected;
  for (unsigned k = 0; k < abi.size(); ++k)
    expected.push_back({k, k, abi[k].buffer ? "buffer" : "scalar", "", -1});
  for (unsigned k = 0; k < abi.size(); ++k)
    if (abi[k].hasSizeBindings())
      for (int d = 0; d < abi[k].rank(); ++d)
        if (abi[k].shape[d] < 0)
          expected.push_back({unsigned(expected.size()), k, "size", "i32", d});
  for (const std::string &global : globals)
    expected.push_back(
        {unsigned(expected.size()), 0, "global", "", -1, global});
  if (prints)
    expected.push_back({unsigned(expected.size()), 0, "printf", "i32", -1});
  bool same = expected.size() == kernel.bindings.size();
  for (size_t i = 0; same && i < expected.size(); ++i) {
    const BindingInfo &a = expected[i], &b = kernel.bindings[i];
    same = a.binding == b.binding && a.kind == b.kind &&
           (a.kind == "printf" || a.kind == "global" || a.param == b.param) &&
           (a.kind != "size" || a.dim == b.dim) && a.global == b.global;
  }
  if (same)
    return Error::success();
  return makeError("the manifest's bindings of kernel '" + kernel.name +
                   "' do not follow the launch convention (binding k is "
                   "parameter k, then one size binding per dynamic extent of "
                   "each flattened memref, then the module globals the "
                   "module's record lists for it): was it written by another "
                   "version of nabla-compile?");
}

/// Writes the initial contents of the module globals `bound` (a kernel's)
/// into their buffers again: a repeat starts where the first launch did.
Error resetModuleGlobals(Device &device, void *module,
                         const ModuleGlobals &globals,
                         const std::vector<std::string> &bound) {
  for (const std::string &name : bound) {
    const ModuleGlobal *global = globals.find(name);
    Expected<GlobalSymbol> symbol = device.getGlobal(module, name);
    if (!symbol)
      return symbol.takeError();
    if (!global || symbol->bytes < global->bytes)
      return makeError("internal error: module global '" + name +
                       "' has no buffer of its size");
    auto *bytes = static_cast<uint8_t *>(symbol->address);
    size_t initial = global->initial.size();
    if (initial)
      if (Error e = device.copy(bytes, global->initial.data(), initial,
                                nullptr))
        return e;
    if (Error e = device.fill(bytes + initial, 0, 1, global->bytes - initial,
                              nullptr))
      return e;
  }
  return Error::success();
}

/// Storage for one launch's arguments: `pointers` is what Device::launch
/// takes.
struct PackedArguments {
  std::vector<std::array<uint8_t, 8>> values;
  std::vector<void *> pointers;
};

Error packArguments(const std::vector<ArgumentInfo> &arguments,
                    const std::vector<HostParam> &params,
                    const std::vector<uint64_t> &devicePointers,
                    PackedArguments &packed) {
  packed.values.assign(arguments.size(), {});
  packed.pointers.clear();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const ArgumentInfo &arg = arguments[i];
    if (arg.param >= params.size())
      return makeError("manifest argument refers to a missing parameter");
    const HostParam &param = params[arg.param];
    std::array<uint8_t, 8> &slot = packed.values[i];
    auto put64 = [&](uint64_t v) { std::memcpy(slot.data(), &v, 8); };
    const std::vector<int64_t> &shape = param.buffer.shape;
    if (arg.field == "value") {
      std::memcpy(slot.data(), param.scalar, param.scalarBytes);
    } else if (arg.field == "allocated" || arg.field == "aligned") {
      put64(devicePointers[arg.param]);
    } else if (arg.field == "offset") {
      put64(0);
    } else if (arg.field == "size" || arg.field == "stride") {
      if (arg.dim < 0 || arg.dim >= static_cast<int>(shape.size()))
        return makeError("manifest argument has a bad dimension");
      int64_t v = 1;
      if (arg.field == "size")
        v = shape[arg.dim];
      else
        for (size_t d = arg.dim + 1; d < shape.size(); ++d)
          v *= shape[d];
      put64(static_cast<uint64_t>(v));
    } else {
      return makeError("unknown manifest argument field '" + arg.field + "'");
    }
    packed.pointers.push_back(slot.data());
  }
  return Error::success();
}

/// "x,y,z".
std::string text(const Dim3 &size) {
  return std::to_string(size.x) + "," + std::to_string(size.y) + "," +
         std::to_string(size.z);
}

std::string text(const std::array<uint32_t, 3> &size) {
  return std::to_string(size[0]) + "," + std::to_string(size[1]) + "," +
         std::to_string(size[2]);
}

/// Checks the launch against what the device allows.
Error checkLaunch(const DeviceInfo &info, const LaunchSpec &spec) {
  const Dim3 &b = spec.block, &g = spec.grid;
  if (b.x > info.maxBlock[0] || b.y > info.maxBlock[1] ||
      b.z > info.maxBlock[2] || b.product() > info.maxThreadsPerBlock)
    return makeError("block " + text(b) + " exceeds what '" + info.name +
                     "' allows (at most " +
                     std::to_string(info.maxThreadsPerBlock) + " threads, " +
                     text(info.maxBlock) + ")");
  if (g.x > info.maxGrid[0] || g.y > info.maxGrid[1] || g.z > info.maxGrid[2])
    return makeError("grid " + text(g) + " exceeds what '" + info.name +
                     "' allows (at most " + text(info.maxGrid) + ")");
  if (spec.timing && !info.timingProblem.empty())
    return makeError(info.backend + " device '" + info.name +
                     "' cannot time kernels: " + info.timingProblem);
  return Error::success();
}

/// One launch's device objects, released when it goes out of scope.
class LaunchResources {
public:
  explicit LaunchResources(Device &device) : device(device) {}
  ~LaunchResources() {
    for (void *pointer : allocations)
      (void)device.free(pointer, nullptr);
    if (module)
      (void)device.unloadModule(module);
  }

  Expected<void *> allocate(uint64_t bytes) {
    Expected<void *> pointer = device.allocate(bytes, nullptr, false);
    if (pointer)
      allocations.push_back(*pointer);
    return pointer;
  }

  /// Keeps everything: after a kernel that did not finish, the device may
  /// not be usable (freeing its memory could wait forever).
  void abandon() {
    allocations.clear();
    module = nullptr;
  }

  Device &device;
  void *module = nullptr;

private:
  std::vector<void *> allocations;
};

void *address(uint64_t value) { return reinterpret_cast<void *>(value); }

/// Writes each patch object into its global; `locations[i]` is where object
/// i lives.
Error writePatches(LaunchResources &resources, void *module,
                   const std::vector<PatchObject> &patches,
                   std::vector<uint64_t> &locations) {
  Device &device = resources.device;
  locations.assign(patches.size(), 0);
  for (size_t i = 0; i < patches.size(); ++i) {
    const PatchObject &patch = patches[i];
    const std::vector<uint8_t> &bytes = patch.object->data;
    std::string what = "relocation record '" + patch.key + "'";
    Expected<GlobalSymbol> global = device.getGlobal(module, patch.symbol);
    if (!global)
      return global.takeError().withContext(
          what + " was compiled with the patch strategy");
    uint64_t at = reinterpret_cast<uint64_t>(global->address);
    if (!patch.pointer) {
      if (global->bytes != bytes.size())
        return makeError(what + ": the module's @" + patch.symbol + " holds " +
                         std::to_string(global->bytes) +
                         " bytes, the object has " +
                         std::to_string(bytes.size()));
      if (Error e =
              device.copy(address(at), bytes.data(), bytes.size(), nullptr))
        return e;
      locations[i] = at;
      continue;
    }
    if (global->bytes != sizeof(uint64_t))
      return makeError(what + ": the slot @" + patch.symbol +
                       " is not a 64-bit pointer");
    Expected<void *> copy =
        resources.allocate(std::max<size_t>(bytes.size(), 16));
    if (!copy)
      return copy.takeError();
    uint64_t copyAddress = reinterpret_cast<uint64_t>(*copy);
    if (!bytes.empty())
      if (Error e = device.copy(*copy, bytes.data(), bytes.size(), nullptr))
        return e;
    if (Error e = device.copy(address(at), &copyAddress, sizeof(copyAddress),
                              nullptr))
      return e;
    locations[i] = copyAddress;
  }
  return device.synchronize(nullptr);
}

/// Copies the writable patch objects to (restore) or from `locations`.
Error transferPatches(Device &device, const std::vector<PatchObject> &patches,
                      const std::vector<uint64_t> &locations, bool toDevice) {
  for (size_t i = 0; i < patches.size(); ++i) {
    std::vector<uint8_t> &bytes = patches[i].object->data;
    if (patches[i].constant || bytes.empty())
      continue;
    Error e = toDevice ? device.copy(address(locations[i]), bytes.data(),
                                     bytes.size(), nullptr)
                       : device.copy(bytes.data(), address(locations[i]),
                                     bytes.size(), nullptr);
    if (e)
      return e;
  }
  return Error::success();
}

} // namespace

/// Allocates a global-memory tape of `bytes`, zeroed (the kernel writes
/// every word before it reads it); a growing one's first word holds
/// `capacity` (its second, the overflow, starts at 0).
static Error allocateTape(Device &device, LaunchResources &resources,
                          uint64_t bytes, bool growable, uint64_t capacity,
                          uint64_t &pointer) {
  Expected<void *> memory = resources.allocate(std::max<size_t>(bytes, 16));
  if (!memory)
    return memory.takeError();
  pointer = reinterpret_cast<uint64_t>(*memory);
  if (!bytes)
    return Error::success();
  if (Error e = device.fill(*memory, 0, 4, bytes / 4, nullptr))
    return std::move(e).withContext("zeroing the global-memory tape");
  if (!growable)
    return Error::success();
  uint32_t slots = static_cast<uint32_t>(capacity);
  if (Error e = device.copy(address(pointer), &slots, 4, nullptr))
    return std::move(e).withContext("writing the tape's capacity");
  return device.synchronize(nullptr);
}

/// The largest capacity a thread of the last launch needed (the growing
/// tape's second word; 0 when every thread fitted).
static Expected<uint64_t> neededTapeCapacity(Device &device,
                                             uint64_t pointer) {
  int32_t needed = 0;
  if (Error e = device.copy(&needed, address(pointer + 4), 4, nullptr))
    return std::move(e).withContext("reading the tape's overflow word");
  if (Error e = device.synchronize(nullptr))
    return std::move(e);
  return needed > 0 ? static_cast<uint64_t>(needed) : 0;
}

Error nabla::runtime::launchKernel(Device &device, const LaunchSpec &spec,
                                   std::vector<HostParam> &params) {
  const DeviceInfo &info = device.info();
  const KernelInfo &kernel = *spec.kernel;
  if (Error e = checkLaunch(info, spec))
    return e;
  std::vector<KernelParam> abi = kernelABI(kernel);
  if (abi.size() != params.size())
    return makeError("kernel '" + kernel.name + "' takes " +
                     std::to_string(abi.size()) + " parameters, got " +
                     std::to_string(params.size()));
  bool prints =
      spec.printf &&
      std::find(spec.printf->kernels.begin(), spec.printf->kernels.end(),
                kernel.name) != spec.printf->kernels.end();
  static const ModuleGlobals noGlobals;
  const ModuleGlobals &globals = spec.globals ? *spec.globals : noGlobals;
  const std::vector<std::string> &bound = globals.boundBy(kernel.name);
  if (info.backend == "vulkan")
    if (Error e = checkBindings(kernel, abi, bound, prints))
      return e;
  std::vector<ArgumentInfo> arguments = llvmArguments(kernel, abi);
  // A gradient kernel keeping the shadow of dynamic shared memory after the
  // primal's learns the launch's bytes, and gets twice as many.
  bool shadowsDynamicShared = false;
  for (HostParam &param : params)
    if (param.info && param.info->dynamicSharedBytes) {
      uint32_t bytes = spec.dynamicSharedMemory;
      std::memcpy(param.scalar, &bytes, sizeof(bytes));
      param.scalarBytes = sizeof(bytes);
      shadowsDynamicShared = true;
    }

  // The global-memory tape, sized from the launch (the user passes none):
  // device memory only, no host copy. A split-mode kernel's tape is the
  // caller's: its size is checked.
  uint64_t tapeBytes = 0;
  auto argument = [&](unsigned index, int64_t &value) {
    if (index >= params.size() || abi[index].buffer ||
        !params[index].scalarBytes ||
        params[index].info->type.find('f') != std::string::npos)
      return false;
    value = params[index].scalarAsInteger();
    return true;
  };
  // Buffers passed in place (a PyTorch or CuPy array): checked, and their
  // producers' streams waited for before anything reads them — the tape's
  // formula may (ragged rows' offsets), as the launch does.
  for (size_t k = 0; k < params.size(); ++k)
    if (abi[k].buffer && params[k].onDevice) {
      const DeviceBuffer &buffer = params[k].device;
      if (Error e = device.adoptExternalBuffer(buffer.pointer, buffer.bytes,
                                               buffer.stream))
        return std::move(e).withContext("parameter #" + std::to_string(k));
    }
  // Elements of integer buffers (ragged rows' offsets), read from the host
  // data, or from device memory (copied once) for buffers passed in place.
  std::map<unsigned, std::vector<uint8_t>> deviceCopies;
  auto element = [&](unsigned index, int64_t at, int64_t &value,
                     int64_t &count) {
    if (index >= params.size() || !abi[index].buffer || params[index].null)
      return false;
    const std::string &type = abi[index].type;
    if (type.empty() || type[0] != 'i' || type == "index")
      return false;
    unsigned bytes = hostElementBytes(type);
    const std::vector<uint8_t> *data = &params[index].buffer.data;
    if (params[index].onDevice) {
      auto [copy, fresh] = deviceCopies.try_emplace(index);
      if (fresh) {
        copy->second.resize(params[index].device.bytes);
        if (device.copy(copy->second.data(),
                        address(params[index].device.pointer),
                        copy->second.size(), nullptr) ||
            device.synchronize(nullptr))
          return false;
      }
      data = &copy->second;
    }
    count = bytes ? static_cast<int64_t>(data->size() / bytes) : 0;
    value = 0;
    if (at < 0 || at >= count)
      return true;
    uint64_t raw = 0;
    std::memcpy(&raw, data->data() + at * bytes, bytes);
    unsigned width = 8 * bytes;
    value = width >= 64
                ? static_cast<int64_t>(raw)
                : static_cast<int64_t>(raw << (64 - width)) >> (64 - width);
    return true;
  };
  if (kernel.splitTape && kernel.splitTape->param < params.size()) {
    const HostParam &tape = params[kernel.splitTape->param];
    uint64_t elements =
        tape.onDevice ? tape.device.bytes / 4
                      : static_cast<uint64_t>(tape.buffer.data.size() / 4);
    std::string error;
    if (!checkSplitTape(kernel, argument, element, spec.grid, spec.block,
                        elements, error))
      return makeError(error);
  }
  // A growing tape (loops whose trip counts are known only as they run)
  // starts with a small capacity; a launch that needed more runs again from
  // the same inputs with what it needed.
  bool growable = kernel.tape && kernel.tape->growable;
  uint64_t capacity = growable ? initialTapeCapacity() : 0;
  uint64_t tapeCap = spec.maxTapeBytes ? spec.maxTapeBytes
                                       : defaultMaxTapeBytes(info.memoryBytes);
  auto sizeTape = [&]() -> Error {
    std::string error;
    if (!runtime::tapeBytes(kernel, argument, element, spec.grid, spec.block,
                            tapeCap, tapeBytes, error, capacity))
      return makeError(error);
    HostParam &tape = params[kernel.tape->param];
    tape.buffer = NpyArray();
    tape.buffer.dtype = "i4";
    tape.buffer.shape = {static_cast<int64_t>(tapeBytes / 4)};
    tape.onDevice = false;
    return Error::success();
  };
  if (kernel.tape)
    if (Error e = sizeTape())
      return e;

  // SPIR-V read from disk is validated before a driver sees it.
  if (spec.imageKind == "spv") {
    std::string invalid;
    if (!validateSPIRV(*spec.image, invalid))
      return makeError(kernel.module + ".spv: " + invalid);
  }

  // PTX text must be NUL-terminated for the JIT.
  std::vector<uint8_t> image = *spec.image;
  if (spec.imageKind == "ptx")
    image.push_back(0);
  KernelABI abis{{kernel.name, abi}};
  LaunchResources resources(device);
  Expected<void *> module =
      device.loadModule({image.data(), image.size(), &abis,
                         prints ? spec.printf : nullptr,
                         bound.empty() ? nullptr : &globals});
  if (!module)
    return module.takeError().withContext("loading " + kernel.module + "." +
                                          spec.imageKind);
  resources.module = *module;
  Expected<void *> function = device.getFunction(*module, kernel.name);
  if (!function)
    return function.takeError();

  // Device memory of every buffer; those passed in place (adopted above)
  // are, with repeats or a growing tape, saved for the restores.
  std::vector<uint64_t> pointers(params.size(), 0), snapshots(params.size(), 0);
  auto inPlace = [&](size_t k) {
    return params[k].onDevice && params[k].device.bytes;
  };
  for (size_t k = 0; k < params.size(); ++k) {
    if (!abi[k].buffer)
      continue;
    std::string what = "parameter #" + std::to_string(k);
    if (inPlace(k)) {
      pointers[k] = params[k].device.pointer;
      if (spec.repeat <= 1 && !spec.timing && !growable)
        continue;
      Expected<void *> snapshot = resources.allocate(params[k].device.bytes);
      if (!snapshot)
        return snapshot.takeError();
      snapshots[k] = reinterpret_cast<uint64_t>(*snapshot);
      if (Error e = device.copy(*snapshot, address(pointers[k]),
                                params[k].device.bytes, nullptr))
        return std::move(e).withContext("saving " + what + " for the repeats");
      continue;
    }
    bool isTape = kernel.tape && kernel.tape->param == k;
    if (isTape) {
      if (Error e = allocateTape(device, resources, tapeBytes, growable,
                                 capacity, pointers[k]))
        return e;
      continue;
    }
    Expected<void *> memory =
        resources.allocate(std::max<size_t>(params[k].buffer.data.size(), 16));
    if (!memory)
      return memory.takeError();
    pointers[k] = reinterpret_cast<uint64_t>(*memory);
  }
  PackedArguments packed;
  if (Error e = packArguments(arguments, params, pointers, packed))
    return e;

  LaunchConfig config;
  config.grid = spec.grid;
  config.block = spec.block;
  if (info.dynamicSharedMemoryAtLaunch)
    config.sharedMemoryBytes =
        spec.dynamicSharedMemory * (shadowsDynamicShared ? 2 : 1);
  std::vector<uint64_t> patchLocations;
  // Timed, the repeats follow a first launch whose time is reported apart:
  // the driver's work on a kernel's first use is not the kernel's.
  unsigned launches = std::max(1u, spec.repeat) + (spec.timing ? 1 : 0);
  bool retried = false;
  for (unsigned repeat = 0; repeat < launches; ++repeat) {
    bool firstOfTimed = spec.timing && repeat == 0;
    // Not the first launch: inputs are restored (a repeat, or a growing
    // tape's second try).
    bool again = repeat > 0 || retried;
    // Every launch starts from the host's inputs (the first upload, then
    // restores outside the timed interval).
    auto uploadStart = std::chrono::steady_clock::now();
    if (Error e = again ? transferPatches(device, spec.patches, patchLocations,
                                          /*toDevice=*/true)
                        : writePatches(resources, *module, spec.patches,
                                       patchLocations))
      return e;
    if (again)
      if (Error e = resetModuleGlobals(device, *module, globals, bound))
        return e;
    for (size_t k = 0; k < params.size(); ++k) {
      if (!abi[k].buffer)
        continue;
      Error copied = Error::success();
      if (inPlace(k)) {
        if (again)
          copied = device.copy(address(pointers[k]), address(snapshots[k]),
                               params[k].device.bytes, nullptr);
      } else if (!params[k].buffer.data.empty()) {
        copied = device.copy(address(pointers[k]), params[k].buffer.data.data(),
                             params[k].buffer.data.size(), nullptr);
      }
      if (copied)
        return copied;
    }
    // A copy from pageable memory may return before its DMA ends: the
    // upload's time includes the wait for it.
    if (Error e = device.synchronize(nullptr))
      return e;
    if (spec.timing && !firstOfTimed)
      spec.timing->uploadNs.push_back(elapsedNs(uploadStart));
    double kernelNs = 0;
    config.kernelNs = spec.timing ? &kernelNs : nullptr;
    std::string what = "kernel '" + kernel.name + "'";
    if (Error e = device.launch(*function, config, packed.pointers.data(),
                                packed.pointers.size())) {
      // A timed launch waited for the kernel.
      if (spec.timing)
        resources.abandon();
      return std::move(e).withContext(what);
    }
    if (Error e = device.synchronize(nullptr)) {
      resources.abandon();
      return std::move(e).withContext(what);
    }
    // A growing tape too small for some thread: again, with the capacity
    // it needed (the kernel's adjoints through the loop were NaN).
    if (growable) {
      Expected<uint64_t> needed =
          neededTapeCapacity(device, pointers[kernel.tape->param]);
      if (!needed)
        return needed.takeError();
      if (*needed > capacity) {
        capacity = *needed;
        if (Error e = sizeTape())
          return e;
        if (Error e = allocateTape(device, resources, tapeBytes, growable,
                                   capacity, pointers[kernel.tape->param]))
          return e;
        if (Error e = packArguments(arguments, params, pointers, packed))
          return e;
        retried = true;
        --repeat;
        continue;
      }
    }
    if (firstOfTimed)
      spec.timing->firstLaunchNs = kernelNs;
    else if (spec.timing)
      spec.timing->kernelNs.push_back(kernelNs);
  }

  auto downloadStart = std::chrono::steady_clock::now();
  for (size_t k = 0; k < params.size(); ++k)
    if (abi[k].buffer && !inPlace(k) && !params[k].buffer.data.empty())
      if (Error e =
              device.copy(params[k].buffer.data.data(), address(pointers[k]),
                          params[k].buffer.data.size(), nullptr))
        return e;
  if (Error e = transferPatches(device, spec.patches, patchLocations,
                                /*toDevice=*/false))
    return e;
  if (Error e = device.synchronize(nullptr))
    return e;
  if (spec.timing)
    spec.timing->downloadNs = elapsedNs(downloadStart);
  return Error::success();
}
