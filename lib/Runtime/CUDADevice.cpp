//===- CUDADevice.cpp - Run cubin/PTX kernels through the CUDA driver -----===//
//
// libcuda.so.1 is opened at run time and the few driver API entry points used
// here are declared locally, so builds need neither a GPU nor the CUDA
// headers. The primary context of the device is used; completion is polled
// with a timeout so that a hung kernel cannot hang the tool. A timed launch
// records an event before and after cuLaunchKernel on the default stream;
// their elapsed time is the kernel's (the copies before and after are host
// synchronous and outside it).
//
// A buffer already in device memory (HostParam::onDevice: a CuPy array) is
// passed as it is: checked to lie in one allocation of this device, its
// producer's stream waited for, neither allocated nor copied to or from the
// host, and updated in place. Repeats restore it from a device-side copy.
//
//===----------------------------------------------------------------------===//

#include "LLVMArguments.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <dlfcn.h>
#include <thread>

using namespace nabla::runtime;

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
constexpr int CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11;
constexpr int CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12;

struct Driver {
  void *library = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule,
                                const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamQuery)(CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char **);

  bool load(std::string &error) {
    library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      error = "no CUDA driver (libcuda.so.1 not found)";
      return false;
    }
    bool ok = true;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(library, name));
      if (!fn) {
        error = std::string("the CUDA driver lacks ") + name;
        ok = false;
      }
    };
    get(cuInit, "cuInit");
    get(cuDeviceGetCount, "cuDeviceGetCount");
    get(cuDeviceGet, "cuDeviceGet");
    get(cuDeviceGetName, "cuDeviceGetName");
    get(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    get(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    get(cuCtxSetCurrent, "cuCtxSetCurrent");
    get(cuModuleLoadData, "cuModuleLoadData");
    get(cuModuleUnload, "cuModuleUnload");
    get(cuModuleGetFunction, "cuModuleGetFunction");
    get(cuModuleGetGlobal, "cuModuleGetGlobal_v2");
    get(cuMemAlloc, "cuMemAlloc_v2");
    get(cuMemFree, "cuMemFree_v2");
    get(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    get(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    get(cuMemcpyDtoD, "cuMemcpyDtoD_v2");
    get(cuPointerGetAttribute, "cuPointerGetAttribute");
    get(cuLaunchKernel, "cuLaunchKernel");
    get(cuStreamQuery, "cuStreamQuery");
    get(cuEventCreate, "cuEventCreate");
    get(cuEventDestroy, "cuEventDestroy_v2");
    get(cuEventRecord, "cuEventRecord");
    get(cuEventElapsedTime, "cuEventElapsedTime");
    get(cuGetErrorString, "cuGetErrorString");
    return ok;
  }

  std::string describe(const char *what, CUresult result) const {
    const char *text = nullptr;
    if (cuGetErrorString)
      cuGetErrorString(result, &text);
    return std::string(what) +
           " failed: " + (text ? text : "CUDA error " + std::to_string(result));
  }
};

class CUDADevice final : public Device {
public:
  ~CUDADevice() override {
    if (context)
      driver.cuDevicePrimaryCtxRelease(device);
    if (driver.library)
      dlclose(driver.library);
  }

  bool open(int index, std::string &error) {
    if (!driver.load(error))
      return false;
    if (CUresult r = driver.cuInit(0)) {
      error = driver.describe("cuInit", r);
      return false;
    }
    int count = 0;
    driver.cuDeviceGetCount(&count);
    if (count == 0) {
      error = "no CUDA device";
      return false;
    }
    if (index >= count) {
      error = "CUDA device index " + std::to_string(index) + " out of range (" +
              std::to_string(count) + " devices)";
      return false;
    }
    ordinal = index < 0 ? 0 : index;
    if (CUresult r = driver.cuDeviceGet(&device, ordinal)) {
      error = driver.describe("cuDeviceGet", r);
      return false;
    }
    char buffer[256] = {};
    driver.cuDeviceGetName(buffer, sizeof(buffer) - 1, device);
    deviceName = buffer;
    int major = 0, minor = 0;
    driver.cuDeviceGetAttribute(
        &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    driver.cuDeviceGetAttribute(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    smChip = "sm_" + std::to_string(major * 10 + minor);
    driver.cuDeviceGetAttribute(
        &maxThreads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device);
    if (CUresult r = driver.cuDevicePrimaryCtxRetain(&context, device)) {
      error = driver.describe("cuDevicePrimaryCtxRetain", r);
      return false;
    }
    driver.cuCtxSetCurrent(context);
    return true;
  }

  std::string backend() const override { return "cuda"; }
  std::string name() const override { return deviceName; }
  std::string chip() const override { return smChip; }
  unsigned subgroupSize() const override { return 32; }

  bool launch(const LaunchSpec &spec, std::vector<HostParam> &params,
              std::string &error) override {
    if (spec.block.product() > static_cast<uint64_t>(maxThreads)) {
      error = "block of " + std::to_string(spec.block.product()) +
              " threads exceeds the " + std::to_string(maxThreads) + " that '" +
              deviceName + "' allows";
      return false;
    }
    // PTX text must be NUL-terminated for the JIT.
    std::vector<uint8_t> image = *spec.image;
    if (spec.imageKind == "ptx")
      image.push_back(0);
    CUmodule module = nullptr;
    if (CUresult r = driver.cuModuleLoadData(&module, image.data())) {
      error = driver.describe("cuModuleLoadData", r) + " (" + spec.imageKind +
              " for " + smChip + "?)";
      return false;
    }
    std::vector<CUdeviceptr> allocations(params.size(), 0);
    // Device-side copies of in-place buffers, restored before each repeat.
    std::vector<CUdeviceptr> snapshots(params.size(), 0);
    std::vector<uint64_t> patchAllocations, patchLocations;
    CUevent events[2] = {nullptr, nullptr};
    auto release = [&] {
      for (CUevent event : events)
        if (event)
          driver.cuEventDestroy(event);
      for (const std::vector<CUdeviceptr> *list : {&allocations, &snapshots})
        for (CUdeviceptr p : *list)
          if (p)
            driver.cuMemFree(p);
      for (uint64_t p : patchAllocations)
        driver.cuMemFree(p);
      driver.cuModuleUnload(module);
    };
    if (spec.timing)
      for (CUevent &event : events)
        if (CUresult r = driver.cuEventCreate(&event, /*CU_EVENT_DEFAULT=*/0)) {
          error = driver.describe("cuEventCreate", r);
          release();
          return false;
        }
    GlobalPatcher patcher = makePatcher(module);
    CUfunction function = nullptr;
    if (CUresult r = driver.cuModuleGetFunction(&function, module,
                                                spec.kernel->name.c_str())) {
      error = driver.describe("cuModuleGetFunction", r);
      release();
      return false;
    }
    std::vector<uint64_t> pointers(params.size(), 0);
    for (size_t k = 0; k < params.size(); ++k) {
      if (!params[k].info->isBuffer)
        continue;
      if (inPlace(params[k])) {
        if (!checkDeviceBuffer(k, params[k].device, error)) {
          release();
          return false;
        }
        pointers[k] = params[k].device.pointer;
        continue;
      }
      const NpyArray &array = params[k].buffer;
      size_t bytes = std::max<size_t>(array.data.size(), 16);
      if (CUresult r = driver.cuMemAlloc(&allocations[k], bytes)) {
        error = driver.describe("cuMemAlloc", r);
        release();
        return false;
      }
      pointers[k] = allocations[k];
    }
    PackedArguments packed;
    if (!packLLVMArguments(*spec.kernel, params, pointers, packed, error)) {
      release();
      return false;
    }
    // Polls `stream` until it is idle or the timeout passes; a timeout
    // leaves the context unusable (do not touch its memory).
    auto finishStream = [&](CUstream stream, const std::string &what) {
      auto deadline = std::chrono::steady_clock::now() +
                      std::chrono::seconds(spec.timeoutSeconds);
      CUresult status;
      while ((status = driver.cuStreamQuery(stream)) == CUDA_ERROR_NOT_READY) {
        if (std::chrono::steady_clock::now() > deadline) {
          error = what + " did not finish within " +
                  std::to_string(spec.timeoutSeconds) + " s";
          return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      if (status != CUDA_SUCCESS) {
        error = driver.describe(what.c_str(), status);
        release();
        return false;
      }
      return true;
    };
    auto finish = [&](const std::string &what) {
      return finishStream(nullptr, what);
    };
    // The producers of in-place buffers finish before the kernel reads them;
    // with repeats, their contents are kept for the restores.
    for (size_t k = 0; k < params.size(); ++k) {
      if (!inPlace(params[k]))
        continue;
      const DeviceBuffer &buffer = params[k].device;
      if (buffer.stream &&
          !finishStream(reinterpret_cast<CUstream>(buffer.stream),
                        "the stream of parameter #" + std::to_string(k))) {
        release();
        return false;
      }
      if (spec.repeat > 1) {
        CUresult r = driver.cuMemAlloc(&snapshots[k], buffer.bytes);
        if (!r)
          r = driver.cuMemcpyDtoD(snapshots[k], buffer.pointer, buffer.bytes);
        if (r) {
          error = "saving parameter #" + std::to_string(k) +
                  " for the repeats: " + driver.describe("cuMemcpyDtoD", r);
          release();
          return false;
        }
      }
    }
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
        if (inPlace(params[k])) {
          if (!repeat)
            continue;
          if (CUresult r =
                  driver.cuMemcpyDtoD(params[k].device.pointer, snapshots[k],
                                      params[k].device.bytes)) {
            error = driver.describe("cuMemcpyDtoD", r);
            release();
            return false;
          }
          continue;
        }
        const NpyArray &array = params[k].buffer;
        if (!params[k].info->isBuffer || array.data.empty())
          continue;
        if (CUresult r = driver.cuMemcpyHtoD(allocations[k], array.data.data(),
                                             array.data.size())) {
          error = driver.describe("cuMemcpyHtoD", r);
          release();
          return false;
        }
      }
      if (spec.timing) {
        // A copy from pageable memory may return before its DMA ends: the
        // upload's time includes the wait for it.
        if (!finish("the upload"))
          return false;
        spec.timing->uploadNs.push_back(elapsedNs(uploadStart));
        if (CUresult r = driver.cuEventRecord(events[0], nullptr)) {
          error = driver.describe("cuEventRecord", r);
          release();
          return false;
        }
      }
      if (CUresult r = driver.cuLaunchKernel(
              function, spec.grid.x, spec.grid.y, spec.grid.z, spec.block.x,
              spec.block.y, spec.block.z, spec.dynamicSharedMemory, nullptr,
              packed.pointers.data(), nullptr)) {
        error = driver.describe("cuLaunchKernel", r);
        release();
        return false;
      }
      if (spec.timing)
        if (CUresult r = driver.cuEventRecord(events[1], nullptr)) {
          error = driver.describe("cuEventRecord", r);
          release();
          return false;
        }
      if (!finish("kernel '" + spec.kernel->name + "'"))
        return false;
      if (spec.timing) {
        float milliseconds = 0;
        if (CUresult r = driver.cuEventElapsedTime(&milliseconds, events[0],
                                                   events[1])) {
          error = driver.describe("cuEventElapsedTime", r);
          release();
          return false;
        }
        // Whole nanoseconds: the float milliseconds carry about 7 digits.
        spec.timing->kernelNs.push_back(std::round(double(milliseconds) * 1e6));
      }
    }
    auto downloadStart = std::chrono::steady_clock::now();
    for (size_t k = 0; k < params.size(); ++k)
      if (params[k].info->isBuffer && !inPlace(params[k]) &&
          !params[k].buffer.data.empty())
        driver.cuMemcpyDtoH(params[k].buffer.data.data(), allocations[k],
                            params[k].buffer.data.size());
    bool read = readPatches(patcher, spec.patches, patchLocations, error);
    if (spec.timing)
      spec.timing->downloadNs = elapsedNs(downloadStart);
    release();
    return read;
  }

private:
  /// A buffer passed in device memory; empty ones get a small allocation
  /// like host buffers (their pointer may be null).
  static bool inPlace(const HostParam &param) {
    return param.onDevice && param.device.bytes;
  }

  /// True if [pointer, pointer + bytes) lies in one allocation of this
  /// device; else a message for parameter #k.
  bool checkDeviceBuffer(size_t k, const DeviceBuffer &buffer,
                         std::string &error) {
    std::string what = "parameter #" + std::to_string(k) + " (device pointer " +
                       std::to_string(buffer.pointer) + ")";
    int owner = -1;
    if (CUresult r = driver.cuPointerGetAttribute(
            &owner, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, buffer.pointer)) {
      error = driver.describe(("cuPointerGetAttribute of " + what).c_str(), r) +
              ": not CUDA memory";
      return false;
    }
    if (owner != ordinal) {
      error = what + " lives on CUDA device " + std::to_string(owner) +
              ", the launch runs on device " + std::to_string(ordinal);
      return false;
    }
    CUdeviceptr start = 0;
    size_t size = 0;
    std::string problem;
    if (CUresult r = driver.cuPointerGetAttribute(
            &start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, buffer.pointer))
      problem = driver.describe("cuPointerGetAttribute", r);
    else if (CUresult r = driver.cuPointerGetAttribute(
                 &size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, buffer.pointer))
      problem = driver.describe("cuPointerGetAttribute", r);
    else if (buffer.pointer - start > size ||
             buffer.bytes > size - (buffer.pointer - start))
      problem = what + ": " + std::to_string(buffer.bytes) +
                " bytes do not fit in its allocation of " +
                std::to_string(size) + " bytes at " + std::to_string(start);
    if (problem.empty())
      return true;
    error = problem;
    return false;
  }

  /// The driver primitives `patch` relocation records need, on `module`.
  GlobalPatcher makePatcher(CUmodule module) {
    auto check = [this](const char *what, CUresult r, std::string &error) {
      if (r != CUDA_SUCCESS)
        error = driver.describe(what, r);
      return r == CUDA_SUCCESS;
    };
    GlobalPatcher patcher;
    patcher.lookup = [=](const std::string &symbol, uint64_t &address,
                         size_t &bytes, std::string &error) {
      CUdeviceptr pointer = 0;
      if (!check("cuModuleGetGlobal",
                 driver.cuModuleGetGlobal(&pointer, &bytes, module,
                                          symbol.c_str()),
                 error))
        return false;
      address = pointer;
      return true;
    };
    patcher.allocate = [=](size_t bytes, uint64_t &address,
                           std::string &error) {
      CUdeviceptr pointer = 0;
      bool ok = check("cuMemAlloc", driver.cuMemAlloc(&pointer, bytes), error);
      address = pointer;
      return ok;
    };
    patcher.copyToDevice = [=](uint64_t to, const void *from, size_t bytes,
                               std::string &error) {
      return check("cuMemcpyHtoD", driver.cuMemcpyHtoD(to, from, bytes), error);
    };
    patcher.copyToHost = [=](void *to, uint64_t from, size_t bytes,
                             std::string &error) {
      return check("cuMemcpyDtoH", driver.cuMemcpyDtoH(to, from, bytes), error);
    };
    return patcher;
  }

  Driver driver{};
  CUdevice device = 0;
  int ordinal = 0;
  CUcontext context = nullptr;
  std::string deviceName, smChip;
  int maxThreads = 1024;
};

} // namespace

std::unique_ptr<Device> nabla::runtime::createCUDADevice(int index,
                                                         std::string &error) {
  auto device = std::make_unique<CUDADevice>();
  if (!device->open(index, error))
    return nullptr;
  return device;
}
