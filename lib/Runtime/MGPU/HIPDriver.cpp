//===- HIPDriver.cpp - DriverCalls on the HIP runtime ---------------------===//
//
// libamdhip64.so is opened at run time like the CUDA driver; the device is
// selected with hipSetDevice on every calling thread. Copies use
// hipMemcpyDefault: under unified addressing HIP infers the direction.
//
//===----------------------------------------------------------------------===//

#include "DriverHostBackend.h"

#include <dlfcn.h>
#include <type_traits>

using namespace nabla::mgpu;

namespace {

using hipError_t = int;
using hipStream_t = void *;
using hipEvent_t = void *;

class HIPDriver final : public DriverCalls {
public:
  const char *name() const override { return "hip"; }
  int notReady() const override { return 600; } // hipErrorNotReady

  bool open(int index, std::string &error) override {
    for (const char *file :
         {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
      if ((library = dlopen(file, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!library) {
      error = "no HIP runtime (libamdhip64.so not found)";
      return false;
    }
    bool ok = true;
    auto get = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(library, symbol));
      if (!fn && ok) {
        error = std::string("the HIP runtime lacks ") + symbol;
        ok = false;
      }
    };
    get(hipInit, "hipInit");
    get(hipGetDeviceCount, "hipGetDeviceCount");
    get(hipSetDevice, "hipSetDevice");
    get(hipGetErrorString, "hipGetErrorString");
    get(hipModuleLoadData, "hipModuleLoadData");
    get(hipModuleUnload, "hipModuleUnload");
    get(hipModuleGetFunction, "hipModuleGetFunction");
    get(hipModuleLaunchKernel, "hipModuleLaunchKernel");
    get(hipStreamCreate, "hipStreamCreate");
    get(hipStreamDestroy, "hipStreamDestroy");
    get(hipStreamQuery, "hipStreamQuery");
    get(hipStreamWaitEvent, "hipStreamWaitEvent");
    get(hipEventCreateWithFlags, "hipEventCreateWithFlags");
    get(hipEventDestroy, "hipEventDestroy");
    get(hipEventRecord, "hipEventRecord");
    get(hipEventQuery, "hipEventQuery");
    get(hipMalloc, "hipMalloc");
    get(hipMallocManaged, "hipMallocManaged");
    get(hipFree, "hipFree");
    get(hipMemcpyAsync, "hipMemcpyAsync");
    get(hipMemsetD32Async, "hipMemsetD32Async");
    get(hipMemsetD16Async, "hipMemsetD16Async");
    get(hipHostRegister, "hipHostRegister");
    get(hipHostUnregister, "hipHostUnregister");
    if (!ok)
      return false;
    if (hipError_t r = hipInit(0)) {
      error = describe("hipInit", r);
      return false;
    }
    int count = 0;
    hipGetDeviceCount(&count);
    if (count == 0) {
      error = "no HIP device";
      return false;
    }
    if (index >= count) {
      error = "HIP device " + std::to_string(index) + " does not exist (" +
              std::to_string(count) + " devices)";
      return false;
    }
    ordinal = index < 0 ? 0 : index;
    return true;
  }

  int makeCurrent() override { return hipSetDevice(ordinal); }

  std::string describe(const char *what, int status) override {
    const char *text = hipGetErrorString ? hipGetErrorString(status) : nullptr;
    return std::string("HIP: ") + what +
           " failed: " + (text ? text : "error " + std::to_string(status));
  }

  int loadModule(void **module, const void *data) override {
    return hipModuleLoadData(module, data);
  }
  int unloadModule(void *module) override { return hipModuleUnload(module); }
  int getFunction(void **function, void *module, const char *name) override {
    return hipModuleGetFunction(function, module, name);
  }
  int launch(void *function, LaunchSize grid, LaunchSize block,
             uint32_t sharedMemoryBytes, void *stream, void **params) override {
    return hipModuleLaunchKernel(function, grid.x, grid.y, grid.z, block.x,
                                 block.y, block.z, sharedMemoryBytes, stream,
                                 params, nullptr);
  }
  int createStream(void **stream) override { return hipStreamCreate(stream); }
  int destroyStream(void *stream) override { return hipStreamDestroy(stream); }
  int queryStream(void *stream) override { return hipStreamQuery(stream); }
  int waitEvent(void *stream, void *event) override {
    return hipStreamWaitEvent(stream, event, 0);
  }
  int createEvent(void **event) override {
    return hipEventCreateWithFlags(event, /*hipEventDisableTiming=*/2);
  }
  int destroyEvent(void *event) override { return hipEventDestroy(event); }
  int recordEvent(void *event, void *stream) override {
    return hipEventRecord(event, stream);
  }
  int queryEvent(void *event) override { return hipEventQuery(event); }
  int allocate(void **pointer, uint64_t bytes, bool managed) override {
    return managed ? hipMallocManaged(pointer, bytes, /*hipMemAttachGlobal=*/1)
                   : hipMalloc(pointer, bytes);
  }
  int free(void *pointer) override { return hipFree(pointer); }
  int copy(void *destination, const void *source, size_t bytes,
           void *stream) override {
    return hipMemcpyAsync(destination, source, bytes,
                          /*hipMemcpyDefault=*/4, stream);
  }
  int fill32(void *destination, uint32_t value, size_t count,
             void *stream) override {
    return hipMemsetD32Async(destination, static_cast<int>(value), count,
                             stream);
  }
  int fill16(void *destination, uint16_t value, size_t count,
             void *stream) override {
    return hipMemsetD16Async(destination, value, count, stream);
  }
  int registerHost(void *pointer, uint64_t bytes) override {
    return hipHostRegister(pointer, bytes, /*hipHostRegisterDefault=*/0);
  }
  int unregisterHost(void *pointer) override {
    return hipHostUnregister(pointer);
  }

private:
  void *library = nullptr;
  int ordinal = 0;
  hipError_t (*hipInit)(unsigned) = nullptr;
  hipError_t (*hipGetDeviceCount)(int *) = nullptr;
  hipError_t (*hipSetDevice)(int) = nullptr;
  const char *(*hipGetErrorString)(hipError_t) = nullptr;
  hipError_t (*hipModuleLoadData)(void **, const void *) = nullptr;
  hipError_t (*hipModuleUnload)(void *) = nullptr;
  hipError_t (*hipModuleGetFunction)(void **, void *, const char *) = nullptr;
  hipError_t (*hipModuleLaunchKernel)(void *, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      hipStream_t, void **, void **) = nullptr;
  hipError_t (*hipStreamCreate)(hipStream_t *) = nullptr;
  hipError_t (*hipStreamDestroy)(hipStream_t) = nullptr;
  hipError_t (*hipStreamQuery)(hipStream_t) = nullptr;
  hipError_t (*hipStreamWaitEvent)(hipStream_t, hipEvent_t, unsigned) = nullptr;
  hipError_t (*hipEventCreateWithFlags)(hipEvent_t *, unsigned) = nullptr;
  hipError_t (*hipEventDestroy)(hipEvent_t) = nullptr;
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t) = nullptr;
  hipError_t (*hipEventQuery)(hipEvent_t) = nullptr;
  hipError_t (*hipMalloc)(void **, size_t) = nullptr;
  hipError_t (*hipMallocManaged)(void **, size_t, unsigned) = nullptr;
  hipError_t (*hipFree)(void *) = nullptr;
  hipError_t (*hipMemcpyAsync)(void *, const void *, size_t, int,
                               hipStream_t) = nullptr;
  hipError_t (*hipMemsetD32Async)(void *, int, size_t, hipStream_t) = nullptr;
  hipError_t (*hipMemsetD16Async)(void *, unsigned short, size_t,
                                  hipStream_t) = nullptr;
  hipError_t (*hipHostRegister)(void *, size_t, unsigned) = nullptr;
  hipError_t (*hipHostUnregister)(void *) = nullptr;
};

} // namespace

std::unique_ptr<DriverCalls> nabla::mgpu::createHIPDriverCalls() {
  return std::make_unique<HIPDriver>();
}
