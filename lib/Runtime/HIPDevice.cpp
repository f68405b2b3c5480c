//===- HIPDevice.cpp - Run hsaco kernels through the HIP runtime ----------===//
//
// libamdhip64.so is opened at run time, like the CUDA driver. The chip to
// compile for comes from $NABLA_HIP_CHIP (default gfx90a): reading it from
// hipDeviceProp_t would tie the build to one HIP version's struct layout.
// A timed launch records HIP events around hipModuleLaunchKernel on the null
// stream, as the CUDA back end does.
//
//===----------------------------------------------------------------------===//

#include "LLVMArguments.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <thread>

using namespace nabla::runtime;

namespace {

using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorNotReady = 600;

struct Runtime {
  void *library = nullptr;
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceCount)(int *);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipDeviceGetName)(char *, int, int);
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t,
                                     const char *);
  hipError_t (*hipModuleGetGlobal)(void **, size_t *, hipModule_t,
                                   const char *);
  hipError_t (*hipMalloc)(void **, size_t);
  hipError_t (*hipFree)(void *);
  hipError_t (*hipMemcpyHtoD)(void *, const void *, size_t);
  hipError_t (*hipMemcpyDtoH)(void *, void *, size_t);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void **, void **);
  hipError_t (*hipStreamQuery)(hipStream_t);
  hipError_t (*hipEventCreate)(hipEvent_t *);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t);
  const char *(*hipGetErrorString)(hipError_t);

  bool load(std::string &error) {
    for (const char *name :
         {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!library) {
      error = "no HIP runtime (libamdhip64.so not found)";
      return false;
    }
    bool ok = true;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(library, name));
      if (!fn) {
        error = std::string("the HIP runtime lacks ") + name;
        ok = false;
      }
    };
    get(hipInit, "hipInit");
    get(hipGetDeviceCount, "hipGetDeviceCount");
    get(hipSetDevice, "hipSetDevice");
    get(hipDeviceGetName, "hipDeviceGetName");
    get(hipModuleLoadData, "hipModuleLoadData");
    get(hipModuleUnload, "hipModuleUnload");
    get(hipModuleGetFunction, "hipModuleGetFunction");
    get(hipModuleGetGlobal, "hipModuleGetGlobal");
    get(hipMalloc, "hipMalloc");
    get(hipFree, "hipFree");
    get(hipMemcpyHtoD, "hipMemcpyHtoD");
    get(hipMemcpyDtoH, "hipMemcpyDtoH");
    get(hipModuleLaunchKernel, "hipModuleLaunchKernel");
    get(hipStreamQuery, "hipStreamQuery");
    get(hipEventCreate, "hipEventCreate");
    get(hipEventDestroy, "hipEventDestroy");
    get(hipEventRecord, "hipEventRecord");
    get(hipEventElapsedTime, "hipEventElapsedTime");
    get(hipGetErrorString, "hipGetErrorString");
    return ok;
  }

  std::string describe(const char *what, hipError_t result) const {
    const char *text = hipGetErrorString ? hipGetErrorString(result) : nullptr;
    return std::string(what) +
           " failed: " + (text ? text : "HIP error " + std::to_string(result));
  }
};

class HIPDevice final : public Device {
public:
  ~HIPDevice() override {
    if (runtime.library)
      dlclose(runtime.library);
  }

  bool open(int index, std::string &error) {
    if (!runtime.load(error))
      return false;
    if (hipError_t r = runtime.hipInit(0)) {
      error = runtime.describe("hipInit", r);
      return false;
    }
    int count = 0;
    runtime.hipGetDeviceCount(&count);
    if (count == 0) {
      error = "no HIP device";
      return false;
    }
    if (index >= count) {
      error = "HIP device index " + std::to_string(index) + " out of range";
      return false;
    }
    ordinal = index < 0 ? 0 : index;
    runtime.hipSetDevice(ordinal);
    char buffer[256] = {};
    runtime.hipDeviceGetName(buffer, sizeof(buffer) - 1, ordinal);
    deviceName = buffer;
    const char *env = std::getenv("NABLA_HIP_CHIP");
    gfxChip = env && *env ? env : "gfx90a";
    return true;
  }

  std::string backend() const override { return "hip"; }
  std::string name() const override { return deviceName; }
  std::string chip() const override { return gfxChip; }
  unsigned subgroupSize() const override { return 64; }

  bool launch(const LaunchSpec &spec, std::vector<HostParam> &params,
              std::string &error) override {
    if (!refuseDeviceBuffers(params, backend(), error))
      return false;
    hipModule_t module = nullptr;
    if (hipError_t r = runtime.hipModuleLoadData(&module, spec.image->data())) {
      error = runtime.describe("hipModuleLoadData", r) +
              " (was it compiled for " + gfxChip + "? set NABLA_HIP_CHIP)";
      return false;
    }
    std::vector<void *> allocations(params.size(), nullptr);
    std::vector<uint64_t> patchAllocations, patchLocations;
    hipEvent_t events[2] = {nullptr, nullptr};
    auto release = [&] {
      for (hipEvent_t event : events)
        if (event)
          runtime.hipEventDestroy(event);
      for (void *p : allocations)
        if (p)
          runtime.hipFree(p);
      for (uint64_t p : patchAllocations)
        runtime.hipFree(reinterpret_cast<void *>(p));
      runtime.hipModuleUnload(module);
    };
    if (spec.timing)
      for (hipEvent_t &event : events)
        if (hipError_t r = runtime.hipEventCreate(&event)) {
          error = runtime.describe("hipEventCreate", r);
          release();
          return false;
        }
    GlobalPatcher patcher = makePatcher(module);
    hipFunction_t function = nullptr;
    if (hipError_t r = runtime.hipModuleGetFunction(
            &function, module, spec.kernel->name.c_str())) {
      error = runtime.describe("hipModuleGetFunction", r);
      release();
      return false;
    }
    std::vector<uint64_t> pointers(params.size(), 0);
    for (size_t k = 0; k < params.size(); ++k) {
      if (!params[k].info->isBuffer)
        continue;
      const NpyArray &array = params[k].buffer;
      if (hipError_t r = runtime.hipMalloc(
              &allocations[k], std::max<size_t>(array.data.size(), 16))) {
        error = runtime.describe("hipMalloc", r);
        release();
        return false;
      }
      pointers[k] = reinterpret_cast<uint64_t>(allocations[k]);
    }
    PackedArguments packed;
    if (!packLLVMArguments(*spec.kernel, params, pointers, packed, error)) {
      release();
      return false;
    }
    // Polls the null stream until it is idle or the timeout passes; a
    // timeout leaves the device unusable (do not touch its memory).
    auto finish = [&](const std::string &what) {
      auto deadline = std::chrono::steady_clock::now() +
                      std::chrono::seconds(spec.timeoutSeconds);
      hipError_t status;
      while ((status = runtime.hipStreamQuery(nullptr)) == hipErrorNotReady) {
        if (std::chrono::steady_clock::now() > deadline) {
          error = what + " did not finish within " +
                  std::to_string(spec.timeoutSeconds) + " s";
          return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      if (status != hipSuccess) {
        error = runtime.describe(what.c_str(), status);
        release();
        return false;
      }
      return true;
    };
    for (unsigned repeat = 0; repeat < std::max(1u, spec.repeat); ++repeat) {
      // Every repeat starts from the host's inputs (the first upload, then
      // restores outside the timed interval).
      auto uploadStart = std::chrono::steady_clock::now();
      if (!(repeat
                ? restorePatches(patcher, spec.patches, patchLocations, error)
                : writePatches(patcher, spec.patches, patchLocations,
                               patchAllocations, error))) {
        release();
        return false;
      }
      for (size_t k = 0; k < params.size(); ++k) {
        const NpyArray &array = params[k].buffer;
        if (!params[k].info->isBuffer || array.data.empty())
          continue;
        if (hipError_t r = runtime.hipMemcpyHtoD(
                allocations[k], array.data.data(), array.data.size())) {
          error = runtime.describe("hipMemcpyHtoD", r);
          release();
          return false;
        }
      }
      if (spec.timing) {
        if (!finish("the upload"))
          return false;
        spec.timing->uploadNs.push_back(elapsedNs(uploadStart));
        if (hipError_t r = runtime.hipEventRecord(events[0], nullptr)) {
          error = runtime.describe("hipEventRecord", r);
          release();
          return false;
        }
      }
      if (hipError_t r = runtime.hipModuleLaunchKernel(
              function, spec.grid.x, spec.grid.y, spec.grid.z, spec.block.x,
              spec.block.y, spec.block.z, spec.dynamicSharedMemory, nullptr,
              packed.pointers.data(), nullptr)) {
        error = runtime.describe("hipModuleLaunchKernel", r);
        release();
        return false;
      }
      if (spec.timing)
        if (hipError_t r = runtime.hipEventRecord(events[1], nullptr)) {
          error = runtime.describe("hipEventRecord", r);
          release();
          return false;
        }
      if (!finish("kernel '" + spec.kernel->name + "'"))
        return false;
      if (spec.timing) {
        float milliseconds = 0;
        if (hipError_t r = runtime.hipEventElapsedTime(&milliseconds, events[0],
                                                       events[1])) {
          error = runtime.describe("hipEventElapsedTime", r);
          release();
          return false;
        }
        // Whole nanoseconds: the float milliseconds carry about 7 digits.
        spec.timing->kernelNs.push_back(std::round(double(milliseconds) * 1e6));
      }
    }
    auto downloadStart = std::chrono::steady_clock::now();
    for (size_t k = 0; k < params.size(); ++k)
      if (params[k].info->isBuffer && !params[k].buffer.data.empty())
        runtime.hipMemcpyDtoH(params[k].buffer.data.data(), allocations[k],
                              params[k].buffer.data.size());
    bool read = readPatches(patcher, spec.patches, patchLocations, error);
    if (spec.timing)
      spec.timing->downloadNs = elapsedNs(downloadStart);
    release();
    return read;
  }

private:
  /// The runtime primitives `patch` relocation records need, on `module`.
  GlobalPatcher makePatcher(hipModule_t module) {
    auto check = [this](const char *what, hipError_t r, std::string &error) {
      if (r != hipSuccess)
        error = runtime.describe(what, r);
      return r == hipSuccess;
    };
    auto device = [](uint64_t address) {
      return reinterpret_cast<void *>(address);
    };
    GlobalPatcher patcher;
    patcher.lookup = [=](const std::string &symbol, uint64_t &address,
                         size_t &bytes, std::string &error) {
      void *pointer = nullptr;
      bool ok = check(
          "hipModuleGetGlobal",
          runtime.hipModuleGetGlobal(&pointer, &bytes, module, symbol.c_str()),
          error);
      address = reinterpret_cast<uint64_t>(pointer);
      return ok;
    };
    patcher.allocate = [=](size_t bytes, uint64_t &address,
                           std::string &error) {
      void *pointer = nullptr;
      bool ok = check("hipMalloc", runtime.hipMalloc(&pointer, bytes), error);
      address = reinterpret_cast<uint64_t>(pointer);
      return ok;
    };
    patcher.copyToDevice = [=](uint64_t to, const void *from, size_t bytes,
                               std::string &error) {
      return check("hipMemcpyHtoD",
                   runtime.hipMemcpyHtoD(device(to), from, bytes), error);
    };
    patcher.copyToHost = [=](void *to, uint64_t from, size_t bytes,
                             std::string &error) {
      return check("hipMemcpyDtoH",
                   runtime.hipMemcpyDtoH(to, device(from), bytes), error);
    };
    return patcher;
  }

  Runtime runtime{};
  int ordinal = 0;
  std::string deviceName, gfxChip;
};

} // namespace

std::unique_ptr<Device> nabla::runtime::createHIPDevice(int index,
                                                        std::string &error) {
  auto device = std::make_unique<HIPDevice>();
  if (!device->open(index, error))
    return nullptr;
  return device;
}
