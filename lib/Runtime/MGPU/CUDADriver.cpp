//===- CUDADriver.cpp - DriverCalls on the CUDA driver API ----------------===//
//
// libcuda.so.1 is opened at run time and the entry points used are declared
// here, so builds need neither a GPU nor the CUDA headers. The device's
// primary context is made current on every calling thread (async.execute
// regions run on the async runtime's threads). Device pointers are passed
// as CUdeviceptr (a 64-bit integer, the same as a pointer under unified
// addressing).
//
//===----------------------------------------------------------------------===//

#include "DriverHostBackend.h"

#include <dlfcn.h>
#include <type_traits>

using namespace nabla::mgpu;

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUstream = void *;
using CUevent = void *;

class CUDADriver final : public DriverCalls {
public:
  ~CUDADriver() override {
    // The primary context stays retained: kernels' modules may still be
    // unloaded by a JIT's global destructors after this library's.
  }

  const char *name() const override { return "cuda"; }
  int notReady() const override { return 600; } // CUDA_ERROR_NOT_READY

  bool open(int index, std::string &error) override {
    library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      error = "no CUDA driver (libcuda.so.1 not found)";
      return false;
    }
    bool ok = true;
    auto get = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(library, symbol));
      if (!fn && ok) {
        error = std::string("the CUDA driver lacks ") + symbol;
        ok = false;
      }
    };
    get(cuInit, "cuInit");
    get(cuDeviceGetCount, "cuDeviceGetCount");
    get(cuDeviceGet, "cuDeviceGet");
    get(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(cuCtxSetCurrent, "cuCtxSetCurrent");
    get(cuGetErrorString, "cuGetErrorString");
    get(cuModuleLoadData, "cuModuleLoadData");
    get(cuModuleUnload, "cuModuleUnload");
    get(cuModuleGetFunction, "cuModuleGetFunction");
    get(cuLaunchKernel, "cuLaunchKernel");
    get(cuStreamCreate, "cuStreamCreate");
    get(cuStreamDestroy, "cuStreamDestroy_v2");
    get(cuStreamQuery, "cuStreamQuery");
    get(cuStreamWaitEvent, "cuStreamWaitEvent");
    get(cuEventCreate, "cuEventCreate");
    get(cuEventDestroy, "cuEventDestroy_v2");
    get(cuEventRecord, "cuEventRecord");
    get(cuEventQuery, "cuEventQuery");
    get(cuMemAlloc, "cuMemAlloc_v2");
    get(cuMemAllocManaged, "cuMemAllocManaged");
    get(cuMemFree, "cuMemFree_v2");
    get(cuMemcpyAsync, "cuMemcpyAsync");
    get(cuMemsetD32Async, "cuMemsetD32Async");
    get(cuMemsetD16Async, "cuMemsetD16Async");
    get(cuMemHostRegister, "cuMemHostRegister_v2");
    get(cuMemHostUnregister, "cuMemHostUnregister");
    if (!ok)
      return false;
    if (CUresult r = cuInit(0)) {
      error = describe("cuInit", r);
      return false;
    }
    int count = 0;
    cuDeviceGetCount(&count);
    if (count == 0) {
      error = "no CUDA device";
      return false;
    }
    if (index >= count) {
      error = "CUDA device " + std::to_string(index) + " does not exist (" +
              std::to_string(count) + " devices)";
      return false;
    }
    if (CUresult r = cuDeviceGet(&device, index < 0 ? 0 : index)) {
      error = describe("cuDeviceGet", r);
      return false;
    }
    if (CUresult r = cuDevicePrimaryCtxRetain(&context, device)) {
      error = describe("cuDevicePrimaryCtxRetain", r);
      return false;
    }
    return true;
  }

  int makeCurrent() override { return cuCtxSetCurrent(context); }

  std::string describe(const char *what, int status) override {
    const char *text = nullptr;
    if (cuGetErrorString)
      cuGetErrorString(status, &text);
    return std::string("CUDA: ") + what +
           " failed: " + (text ? text : "error " + std::to_string(status));
  }

  int loadModule(void **module, const void *data) override {
    return cuModuleLoadData(module, data);
  }
  int unloadModule(void *module) override { return cuModuleUnload(module); }
  int getFunction(void **function, void *module, const char *name) override {
    return cuModuleGetFunction(function, module, name);
  }
  int launch(void *function, LaunchSize grid, LaunchSize block,
             uint32_t sharedMemoryBytes, void *stream, void **params) override {
    return cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y,
                          block.z, sharedMemoryBytes, stream, params, nullptr);
  }
  int createStream(void **stream) override {
    return cuStreamCreate(stream, /*CU_STREAM_NON_BLOCKING=*/1);
  }
  int destroyStream(void *stream) override { return cuStreamDestroy(stream); }
  int queryStream(void *stream) override { return cuStreamQuery(stream); }
  int waitEvent(void *stream, void *event) override {
    return cuStreamWaitEvent(stream, event, 0);
  }
  int createEvent(void **event) override {
    return cuEventCreate(event, /*CU_EVENT_DISABLE_TIMING=*/2);
  }
  int destroyEvent(void *event) override { return cuEventDestroy(event); }
  int recordEvent(void *event, void *stream) override {
    return cuEventRecord(event, stream);
  }
  int queryEvent(void *event) override { return cuEventQuery(event); }
  int allocate(void **pointer, uint64_t bytes, bool managed) override {
    CUdeviceptr address = 0;
    int status = managed ? cuMemAllocManaged(&address, bytes,
                                             /*CU_MEM_ATTACH_GLOBAL=*/1)
                         : cuMemAlloc(&address, bytes);
    *pointer = reinterpret_cast<void *>(address);
    return status;
  }
  int free(void *pointer) override { return cuMemFree(address(pointer)); }
  int copy(void *destination, const void *source, size_t bytes,
           void *stream) override {
    return cuMemcpyAsync(address(destination), address(source), bytes, stream);
  }
  int fill32(void *destination, uint32_t value, size_t count,
             void *stream) override {
    return cuMemsetD32Async(address(destination), value, count, stream);
  }
  int fill16(void *destination, uint16_t value, size_t count,
             void *stream) override {
    return cuMemsetD16Async(address(destination), value, count, stream);
  }
  int registerHost(void *pointer, uint64_t bytes) override {
    return cuMemHostRegister(pointer, bytes, 0);
  }
  int unregisterHost(void *pointer) override {
    return cuMemHostUnregister(pointer);
  }

private:
  static CUdeviceptr address(const void *pointer) {
    return reinterpret_cast<CUdeviceptr>(pointer);
  }

  void *library = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuModuleLoadData)(void **, const void *) = nullptr;
  CUresult (*cuModuleUnload)(void *) = nullptr;
  CUresult (*cuModuleGetFunction)(void **, void *, const char *) = nullptr;
  CUresult (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **) = nullptr;
  CUresult (*cuStreamCreate)(CUstream *, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamQuery)(CUstream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*cuEventCreate)(CUevent *, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventQuery)(CUevent) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t,
                            CUstream) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t,
                               CUstream) = nullptr;
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t,
                               CUstream) = nullptr;
  CUresult (*cuMemHostRegister)(void *, size_t, unsigned) = nullptr;
  CUresult (*cuMemHostUnregister)(void *) = nullptr;
};

} // namespace

std::unique_ptr<DriverCalls> nabla::mgpu::createCUDADriverCalls() {
  return std::make_unique<CUDADriver>();
}
