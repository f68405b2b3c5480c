//===- HIPDriver.cpp - DriverCalls on the HIP runtime ---------------------===//
//
// libamdhip64.so is opened at run time like the CUDA driver; the device is
// selected with hipSetDevice on every calling thread. Copies use
// hipMemcpyDefault: under unified addressing HIP infers the direction. The
// chip to compile for comes from $NABLA_HIP_CHIP (default gfx90a): reading
// it from hipDeviceProp_t would tie the build to one HIP version's struct
// layout. HIP cannot say whose memory a pointer is here, so it takes no
// device memory in place.
//
//===----------------------------------------------------------------------===//

#include "DriverCalls.h"

#include <cstdlib>

using namespace nabla::runtime;

namespace {

using hipError_t = int;
using hipStream_t = void *;
using hipEvent_t = void *;

class HIPDriver final : public DriverCalls {
public:
  const char *name() const override { return "hip"; }
  int notReady() const override { return 600; } // hipErrorNotReady
  int ordinal() const override { return device; }

  bool open(int index, DeviceInfo &info, std::string &error) override {
    if (!library.open(
            {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})) {
      error = "no HIP runtime (libamdhip64.so not found)";
      return false;
    }
    auto get = [this](auto &fn, const char *symbol) {
      library.get(fn, symbol);
    };
    get(hipInit, "hipInit");
    get(hipGetDeviceCount, "hipGetDeviceCount");
    get(hipSetDevice, "hipSetDevice");
    get(hipDeviceGetName, "hipDeviceGetName");
    get(hipGetErrorString, "hipGetErrorString");
    get(hipModuleLoadData, "hipModuleLoadData");
    get(hipModuleUnload, "hipModuleUnload");
    get(hipModuleGetFunction, "hipModuleGetFunction");
    get(hipModuleGetGlobal, "hipModuleGetGlobal");
    get(hipModuleLaunchKernel, "hipModuleLaunchKernel");
    get(hipStreamCreate, "hipStreamCreate");
    get(hipStreamDestroy, "hipStreamDestroy");
    get(hipStreamQuery, "hipStreamQuery");
    get(hipStreamWaitEvent, "hipStreamWaitEvent");
    get(hipEventCreateWithFlags, "hipEventCreateWithFlags");
    get(hipEventDestroy, "hipEventDestroy");
    get(hipEventRecord, "hipEventRecord");
    get(hipEventQuery, "hipEventQuery");
    get(hipEventElapsedTime, "hipEventElapsedTime");
    get(hipMalloc, "hipMalloc");
    get(hipMallocManaged, "hipMallocManaged");
    get(hipFree, "hipFree");
    get(hipMemcpyAsync, "hipMemcpyAsync");
    get(hipMemsetD32Async, "hipMemsetD32Async");
    get(hipMemsetD16Async, "hipMemsetD16Async");
    get(hipHostRegister, "hipHostRegister");
    get(hipHostUnregister, "hipHostUnregister");
    if (!library.complete("the HIP runtime", error))
      return false;
    if (hipError_t r = hipInit(0)) {
      error = describe("hipInit", r);
      return false;
    }
    int count = 0;
    hipGetDeviceCount(&count);
    if (!checkDeviceIndex("HIP", index, count, error))
      return false;
    device = index < 0 ? 0 : index;
    if (hipError_t r = hipSetDevice(device)) {
      error = describe("hipSetDevice", r);
      return false;
    }
    char text[256] = {};
    hipDeviceGetName(text, sizeof(text) - 1, device);
    info.name = text;
    const char *chip = std::getenv("NABLA_HIP_CHIP");
    info.chip = chip && *chip ? chip : "gfx90a";
    info.subgroupSize = 64;
    return true;
  }

  int makeCurrent() override { return hipSetDevice(device); }

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
  int getGlobal(void **address, size_t *bytes, void *module,
                const char *name) override {
    return hipModuleGetGlobal(address, bytes, module, name);
  }
  int launch(void *function, Dim3 grid, Dim3 block, uint32_t sharedMemoryBytes,
             void *stream, void **params) override {
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
  int createEvent(void **event, bool timing) override {
    return hipEventCreateWithFlags(event,
                                   timing ? 0 : /*hipEventDisableTiming=*/2);
  }
  int destroyEvent(void *event) override { return hipEventDestroy(event); }
  int recordEvent(void *event, void *stream) override {
    return hipEventRecord(event, stream);
  }
  int queryEvent(void *event) override { return hipEventQuery(event); }
  int elapsedTime(float *milliseconds, void *start, void *stop) override {
    return hipEventElapsedTime(milliseconds, start, stop);
  }
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
  DriverLibrary library;
  int device = 0;
  hipError_t (*hipInit)(unsigned) = nullptr;
  hipError_t (*hipGetDeviceCount)(int *) = nullptr;
  hipError_t (*hipSetDevice)(int) = nullptr;
  hipError_t (*hipDeviceGetName)(char *, int, int) = nullptr;
  const char *(*hipGetErrorString)(hipError_t) = nullptr;
  hipError_t (*hipModuleLoadData)(void **, const void *) = nullptr;
  hipError_t (*hipModuleUnload)(void *) = nullptr;
  hipError_t (*hipModuleGetFunction)(void **, void *, const char *) = nullptr;
  hipError_t (*hipModuleGetGlobal)(void **, size_t *, void *,
                                   const char *) = nullptr;
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
  hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t) = nullptr;
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

std::unique_ptr<DriverCalls> nabla::runtime::createHIPDriverCalls() {
  return std::make_unique<HIPDriver>();
}
