//===- CUDADriver.cpp - DriverCalls on the CUDA driver API ----------------===//
//
// libcuda.so.1 is opened at run time and the entry points used are declared
// here, so builds need neither a GPU nor the CUDA headers. The device's
// primary context is made current on every calling thread (async.execute
// regions run on the async runtime's threads). Device pointers are passed
// as CUdeviceptr (a 64-bit integer, the same as a pointer under unified
// addressing), so one copy call serves every direction.
//
//===----------------------------------------------------------------------===//

#include "DriverCalls.h"

using namespace nabla::runtime;

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUstream = void *;
using CUevent = void *;

// CUdevice_attribute and CUpointer_attribute values used here.
constexpr int kMaxThreadsPerBlock = 1;
constexpr int kMaxBlockDimX = 2;
constexpr int kMaxGridDimX = 5;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kPointerDeviceOrdinal = 9;
constexpr int kPointerRangeStart = 11;
constexpr int kPointerRangeSize = 12;

class CUDADriver final : public DriverCalls {
public:
  ~CUDADriver() override {
    // The primary context stays retained and the library loaded: kernels'
    // modules may still be unloaded by a JIT's global destructors after this
    // object is gone.
  }

  const char *name() const override { return "cuda"; }
  int notReady() const override { return 600; } // CUDA_ERROR_NOT_READY
  int ordinal() const override { return device; }

  bool open(int index, DeviceInfo &info, std::string &error) override {
    if (!library.open({"libcuda.so.1"})) {
      error = "no CUDA driver (libcuda.so.1 not found)";
      return false;
    }
    auto get = [this](auto &fn, const char *symbol) {
      library.get(fn, symbol);
    };
    get(cuInit, "cuInit");
    get(cuDeviceGetCount, "cuDeviceGetCount");
    get(cuDeviceGet, "cuDeviceGet");
    get(cuDeviceGetName, "cuDeviceGetName");
    get(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    get(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(cuCtxSetCurrent, "cuCtxSetCurrent");
    get(cuGetErrorString, "cuGetErrorString");
    get(cuModuleLoadData, "cuModuleLoadData");
    get(cuModuleUnload, "cuModuleUnload");
    get(cuModuleGetFunction, "cuModuleGetFunction");
    get(cuModuleGetGlobal, "cuModuleGetGlobal_v2");
    get(cuLaunchKernel, "cuLaunchKernel");
    get(cuStreamCreate, "cuStreamCreate");
    get(cuStreamDestroy, "cuStreamDestroy_v2");
    get(cuStreamQuery, "cuStreamQuery");
    get(cuStreamWaitEvent, "cuStreamWaitEvent");
    get(cuEventCreate, "cuEventCreate");
    get(cuEventDestroy, "cuEventDestroy_v2");
    get(cuEventRecord, "cuEventRecord");
    get(cuEventQuery, "cuEventQuery");
    get(cuEventElapsedTime, "cuEventElapsedTime");
    get(cuMemAlloc, "cuMemAlloc_v2");
    get(cuMemAllocManaged, "cuMemAllocManaged");
    get(cuMemFree, "cuMemFree_v2");
    get(cuMemcpyAsync, "cuMemcpyAsync");
    get(cuMemsetD32Async, "cuMemsetD32Async");
    get(cuMemsetD16Async, "cuMemsetD16Async");
    get(cuMemHostRegister, "cuMemHostRegister_v2");
    get(cuMemHostUnregister, "cuMemHostUnregister");
    get(cuPointerGetAttribute, "cuPointerGetAttribute");
    if (!library.complete("the CUDA driver", error))
      return false;
    if (CUresult r = cuInit(0)) {
      error = describe("cuInit", r);
      return false;
    }
    int count = 0;
    cuDeviceGetCount(&count);
    if (!checkDeviceIndex("CUDA", index, count, error))
      return false;
    if (CUresult r = cuDeviceGet(&device, index < 0 ? 0 : index)) {
      error = describe("cuDeviceGet", r);
      return false;
    }
    if (CUresult r = cuDevicePrimaryCtxRetain(&context, device)) {
      error = describe("cuDevicePrimaryCtxRetain", r);
      return false;
    }
    char text[256] = {};
    cuDeviceGetName(text, sizeof(text) - 1, device);
    info.name = text;
    int major = 0, minor = 0, threads = 0;
    cuDeviceGetAttribute(&major, kComputeCapabilityMajor, device);
    cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, device);
    info.chip = "sm_" + std::to_string(major * 10 + minor);
    if (!cuDeviceGetAttribute(&threads, kMaxThreadsPerBlock, device) &&
        threads > 0)
      info.maxThreadsPerBlock = threads;
    for (int d = 0; d < 3; ++d) {
      int block = 0, grid = 0;
      if (!cuDeviceGetAttribute(&block, kMaxBlockDimX + d, device) && block > 0)
        info.maxBlock[d] = block;
      if (!cuDeviceGetAttribute(&grid, kMaxGridDimX + d, device) && grid > 0)
        info.maxGrid[d] = grid;
    }
    info.subgroupSize = 32;
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
  int getGlobal(void **address, size_t *bytes, void *module,
                const char *name) override {
    CUdeviceptr pointer = 0;
    int status = cuModuleGetGlobal(&pointer, bytes, module, name);
    *address = reinterpret_cast<void *>(pointer);
    return status;
  }
  int launch(void *function, Dim3 grid, Dim3 block, uint32_t sharedMemoryBytes,
             void *stream, void **params) override {
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
  int createEvent(void **event, bool timing) override {
    return cuEventCreate(event, timing ? 0 : /*CU_EVENT_DISABLE_TIMING=*/2);
  }
  int destroyEvent(void *event) override { return cuEventDestroy(event); }
  int recordEvent(void *event, void *stream) override {
    return cuEventRecord(event, stream);
  }
  int queryEvent(void *event) override { return cuEventQuery(event); }
  int elapsedTime(float *milliseconds, void *start, void *stop) override {
    return cuEventElapsedTime(milliseconds, start, stop);
  }
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

  bool queriesPointers() const override { return true; }
  int pointerRange(uint64_t pointer, int *owner, uint64_t *start,
                   size_t *bytes) override {
    CUdeviceptr base = 0;
    if (int r = cuPointerGetAttribute(owner, kPointerDeviceOrdinal, pointer))
      return r;
    if (int r = cuPointerGetAttribute(&base, kPointerRangeStart, pointer))
      return r;
    *start = base;
    return cuPointerGetAttribute(bytes, kPointerRangeSize, pointer);
  }

private:
  static CUdeviceptr address(const void *pointer) {
    return reinterpret_cast<CUdeviceptr>(pointer);
  }

  DriverLibrary library;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuModuleLoadData)(void **, const void *) = nullptr;
  CUresult (*cuModuleUnload)(void *) = nullptr;
  CUresult (*cuModuleGetFunction)(void **, void *, const char *) = nullptr;
  CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, void *,
                                const char *) = nullptr;
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
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
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
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr) = nullptr;
};

} // namespace

std::unique_ptr<DriverCalls> nabla::runtime::createCUDADriverCalls() {
  return std::make_unique<CUDADriver>();
}
