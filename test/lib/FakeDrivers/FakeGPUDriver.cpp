//===- FakeGPUDriver.cpp - A CUDA driver / HIP runtime stand-in -----------===//
//
// Built twice for the tests: as libcuda.so.1 (NABLA_FAKE_CUDA) and as
// libamdhip64.so (NABLA_FAKE_HIP). The runtime opens its driver with dlopen,
// so a test that puts this library first on LD_LIBRARY_PATH runs the CUDA
// and HIP back ends' host code (allocation, copies, argument packing,
// repeats, restores, events, polling, clean-up) on a machine without a GPU.
//
// Device memory is host memory. A "kernel" does not run its code: it adds 1
// to every f32 of the buffer its first argument points to (the memref's
// allocated pointer), so a test can tell one launch from several. Time is a
// fake clock that only a launch advances, by 10 ns per thread of the grid;
// events read it when recorded, so an event pair around one launch measures
// exactly grid * block * 10 ns. A stream is "not ready" once after each
// launch, which exercises the callers' polling. At exit, a leaked
// allocation, module or event is reported on stderr and the process exits
// with status 1.
//
// For tests of device memory passed in place (CuPy arrays), the CUDA fake
// also answers pointer attributes (ordinal 0, the allocation's range),
// copies device to device, accepts the legacy and per-thread default stream
// handles (1, 2) and streams the program created (all one queue, whose
// leaks are reported too), and counts the bytes every kind of copy
// moved (nablaFakeCopiedBytes, not part of any real API). Copies under
// unified addressing (cuMemcpyAsync, hipMemcpyAsync with hipMemcpyDefault)
// take their direction from which side lies in an allocation.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unistd.h>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kNotFound = 500;
constexpr int kNotReady = 600;

struct Module {};
struct Function {
  std::string name;
};
struct Event {
  bool recorded = false;
  uint64_t time = 0;
};

/// The whole fake device; one per process.
struct FakeDevice {
  std::mutex mutex;
  std::map<uintptr_t, size_t> allocations;
  std::set<Module *> modules;
  std::set<Event *> events;
  /// Streams the program created (work on them is ordered with the default
  /// stream's: one queue).
  std::set<uintptr_t> streams;
  uintptr_t lastStream = 16;
  uint64_t clockNs = 0;
  bool pendingWork = false;
  /// Bytes copied host to device, device to host, device to device.
  uint64_t copied[3] = {0, 0, 0};

  ~FakeDevice() {
    size_t leaks = allocations.size() + modules.size() + events.size() +
                   streams.size();
    if (!leaks)
      return;
    std::fprintf(stderr,
                 "fake GPU driver: leaked %zu allocations, %zu modules, %zu "
                 "events, %zu streams\n",
                 allocations.size(), modules.size(), events.size(),
                 streams.size());
    _exit(1);
  }

  /// Null, the legacy and per-thread default streams (1, 2) and created
  /// streams.
  bool validStream(void *stream) {
    uintptr_t handle = reinterpret_cast<uintptr_t>(stream);
    std::lock_guard<std::mutex> lock(mutex);
    return handle <= 2 || streams.count(handle);
  }

  int createStream(void **stream) {
    std::lock_guard<std::mutex> lock(mutex);
    streams.insert(++lastStream);
    *stream = reinterpret_cast<void *>(lastStream);
    return kSuccess;
  }

  int destroyStream(void *stream) {
    std::lock_guard<std::mutex> lock(mutex);
    return streams.erase(reinterpret_cast<uintptr_t>(stream)) ? kSuccess
                                                                : kInvalidValue;
  }

  /// True if [address, address + bytes) lies in one allocation.
  bool inAllocation(uintptr_t address, size_t bytes) {
    auto it = allocations.upper_bound(address);
    if (it == allocations.begin())
      return false;
    --it;
    return address + bytes <= it->first + it->second;
  }

  int allocate(void **pointer, size_t bytes) {
    if (!pointer || !bytes)
      return kInvalidValue;
    void *memory = std::calloc(1, bytes);
    std::lock_guard<std::mutex> lock(mutex);
    allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
    *pointer = memory;
    return kSuccess;
  }

  int release(void *pointer) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!allocations.erase(reinterpret_cast<uintptr_t>(pointer)))
      return kInvalidValue;
    std::free(pointer);
    return kSuccess;
  }

  int copy(void *to, const void *from, size_t bytes, bool toDevice) {
    std::lock_guard<std::mutex> lock(mutex);
    const void *device = toDevice ? to : from;
    if (!inAllocation(reinterpret_cast<uintptr_t>(device), bytes))
      return kInvalidValue;
    std::memcpy(to, from, bytes);
    copied[toDevice ? 0 : 1] += bytes;
    return kSuccess;
  }

  /// A copy under unified addressing: the direction follows from which
  /// side lies in an allocation.
  int copyAny(void *to, const void *from, size_t bytes) {
    bool toDevice, fromDevice;
    {
      std::lock_guard<std::mutex> lock(mutex);
      toDevice = inAllocation(reinterpret_cast<uintptr_t>(to), bytes);
      fromDevice = inAllocation(reinterpret_cast<uintptr_t>(from), bytes);
    }
    if (toDevice && fromDevice)
      return copyOnDevice(reinterpret_cast<uintptr_t>(to),
                          reinterpret_cast<uintptr_t>(from), bytes);
    if (!toDevice && !fromDevice)
      return kInvalidValue;
    return copy(to, from, bytes, toDevice);
  }

  int fill(void *to, uint32_t value, unsigned width, size_t count) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!inAllocation(reinterpret_cast<uintptr_t>(to), count * width))
      return kInvalidValue;
    for (size_t k = 0; k < count; ++k)
      std::memcpy(static_cast<uint8_t *>(to) + k * width, &value, width);
    return kSuccess;
  }

  int copyOnDevice(uintptr_t to, uintptr_t from, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!inAllocation(to, bytes) || !inAllocation(from, bytes))
      return kInvalidValue;
    std::memmove(reinterpret_cast<void *>(to),
                 reinterpret_cast<const void *>(from), bytes);
    copied[2] += bytes;
    return kSuccess;
  }

  /// The allocation holding `address`: its start and size.
  int range(uintptr_t address, uintptr_t &start, size_t &bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = allocations.upper_bound(address);
    if (it == allocations.begin())
      return kInvalidValue;
    --it;
    if (address >= it->first + it->second)
      return kInvalidValue;
    start = it->first;
    bytes = it->second;
    return kSuccess;
  }

  int launch(Function *function, uint64_t threads, void **params) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!function || !params || !params[0])
      return kInvalidValue;
    uintptr_t buffer = *static_cast<uintptr_t *>(params[0]);
    auto it = allocations.find(buffer);
    if (it != allocations.end()) {
      float *values = reinterpret_cast<float *>(buffer);
      for (size_t i = 0; i < it->second / sizeof(float); ++i)
        values[i] += 1.0f;
    }
    clockNs += threads * 10;
    pendingWork = true;
    return kSuccess;
  }

  int query() {
    std::lock_guard<std::mutex> lock(mutex);
    if (pendingWork) {
      pendingWork = false;
      return kNotReady;
    }
    return kSuccess;
  }

  int createEvent(Event **event) {
    std::lock_guard<std::mutex> lock(mutex);
    *event = new Event;
    events.insert(*event);
    return kSuccess;
  }

  int destroyEvent(Event *event) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!events.erase(event))
      return kInvalidValue;
    delete event;
    return kSuccess;
  }

  int queryEvent(Event *event) {
    std::lock_guard<std::mutex> lock(mutex);
    return events.count(event) ? kSuccess : kInvalidValue;
  }

  int record(Event *event, void *stream) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!events.count(event))
      return kInvalidValue;
    event->recorded = true;
    event->time = clockNs;
    return kSuccess;
  }

  int elapsed(float *milliseconds, Event *start, Event *stop) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!events.count(start) || !events.count(stop) || !start->recorded ||
        !stop->recorded)
      return kInvalidValue;
    // Like the real drivers: the stop event must have completed.
    if (pendingWork)
      return kNotReady;
    *milliseconds = float(double(stop->time - start->time) / 1e6);
    return kSuccess;
  }

  int loadModule(Module **module, const void *image) {
    if (!module || !image)
      return kInvalidValue;
    std::lock_guard<std::mutex> lock(mutex);
    *module = new Module;
    modules.insert(*module);
    return kSuccess;
  }

  int unloadModule(Module *module) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!modules.erase(module))
      return kInvalidValue;
    delete module;
    return kSuccess;
  }

  int function(Function **function, Module *module, const char *name) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!modules.count(module) || !name)
      return kInvalidValue;
    // Never freed by the callers' API: kept for the process.
    static std::map<std::string, Function> functions;
    Function &f = functions[name];
    f.name = name;
    *function = &f;
    return kSuccess;
  }
};

/// Destroyed when the library is unloaded (the runtime's dlclose) or the
/// process exits: that is when leaks are checked.
FakeDevice &fake() {
  static FakeDevice device;
  return device;
}

const char *errorString(int result) {
  switch (result) {
  case kSuccess:
    return "no error (fake)";
  case kInvalidValue:
    return "invalid value (fake driver)";
  case kNotFound:
    return "not found (fake driver)";
  case kNotReady:
    return "not ready (fake driver)";
  }
  return "unknown error (fake driver)";
}

} // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

/// With NABLA_FAKE_LOG_LAUNCHES set, each launch says how much dynamic
/// shared memory it was given (the tests check the launcher passes it).
static void logLaunch(unsigned sharedBytes) {
  if (std::getenv("NABLA_FAKE_LOG_LAUNCHES"))
    std::fprintf(stderr,
                 "fake GPU driver: launch with %u bytes of dynamic shared "
                 "memory\n",
                 sharedBytes);
}

#ifdef NABLA_FAKE_CUDA
using CUdeviceptr = unsigned long long;

EXPORT int cuInit(unsigned) { return kSuccess; }
EXPORT int cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
EXPORT int cuDeviceGet(int *device, int index) {
  *device = index;
  return index == 0 ? kSuccess : kInvalidValue;
}
EXPORT int cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "Nabla fake CUDA device");
  return kSuccess;
}
EXPORT int cuDeviceGetAttribute(int *value, int attribute, int) {
  // 75/76: compute capability 9.0; 1: max threads per block; 2-4: block
  // extents; 5-7: grid extents.
  switch (attribute) {
  case 75:
    *value = 9;
    return kSuccess;
  case 76:
    *value = 0;
    return kSuccess;
  case 4:
    *value = 64;
    return kSuccess;
  case 5:
    *value = 2147483647;
    return kSuccess;
  case 6:
  case 7:
    *value = 65535;
    return kSuccess;
  }
  *value = 1024;
  return kSuccess;
}
EXPORT int cuDevicePrimaryCtxRetain(void **context, int) {
  static int primary;
  *context = &primary;
  return kSuccess;
}
EXPORT int cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
EXPORT int cuCtxSetCurrent(void *) { return kSuccess; }
EXPORT int cuModuleLoadData(Module **module, const void *image) {
  return fake().loadModule(module, image);
}
EXPORT int cuModuleUnload(Module *module) {
  return fake().unloadModule(module);
}
EXPORT int cuModuleGetFunction(Function **function, Module *module,
                               const char *name) {
  return fake().function(function, module, name);
}
EXPORT int cuModuleGetGlobal_v2(CUdeviceptr *, size_t *, Module *,
                                const char *) {
  return kNotFound;
}
EXPORT int cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  void *memory = nullptr;
  int result = fake().allocate(&memory, bytes);
  *pointer = reinterpret_cast<uintptr_t>(memory);
  return result;
}
EXPORT int cuMemFree_v2(CUdeviceptr pointer) {
  return fake().release(reinterpret_cast<void *>(pointer));
}
EXPORT int cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t bytes) {
  return fake().copy(reinterpret_cast<void *>(to), from, bytes, true);
}
EXPORT int cuMemcpyDtoH_v2(void *to, CUdeviceptr from, size_t bytes) {
  return fake().copy(to, reinterpret_cast<void *>(from), bytes, false);
}
EXPORT int cuMemcpyDtoD_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes) {
  return fake().copyOnDevice(to, from, bytes);
}
EXPORT int cuPointerGetAttribute(void *data, int attribute,
                                 CUdeviceptr pointer) {
  uintptr_t start = 0;
  size_t bytes = 0;
  if (int result = fake().range(pointer, start, bytes))
    return result;
  switch (attribute) {
  case 9: // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    *static_cast<int *>(data) = 0;
    return kSuccess;
  case 11: // CU_POINTER_ATTRIBUTE_RANGE_START_ADDR
    *static_cast<CUdeviceptr *>(data) = start;
    return kSuccess;
  case 12: // CU_POINTER_ATTRIBUTE_RANGE_SIZE
    *static_cast<size_t *>(data) = bytes;
    return kSuccess;
  }
  return kInvalidValue;
}
EXPORT void nablaFakeCopiedBytes(uint64_t *toDevice, uint64_t *toHost,
                                 uint64_t *onDevice) {
  std::lock_guard<std::mutex> lock(fake().mutex);
  *toDevice = fake().copied[0];
  *toHost = fake().copied[1];
  *onDevice = fake().copied[2];
}
EXPORT int cuLaunchKernel(Function *function, unsigned gx, unsigned gy,
                          unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned sharedBytes, void *stream, void **params,
                          void **) {
  if (!fake().validStream(stream))
    return kInvalidValue;
  logLaunch(sharedBytes);
  return fake().launch(function, uint64_t(gx) * gy * gz * bx * by * bz, params);
}
EXPORT int cuStreamQuery(void *stream) {
  // Every stream is the one fake queue.
  return fake().validStream(stream) ? fake().query() : kInvalidValue;
}
EXPORT int cuEventCreate(Event **event, unsigned) {
  return fake().createEvent(event);
}
EXPORT int cuEventDestroy_v2(Event *event) {
  return fake().destroyEvent(event);
}
EXPORT int cuEventRecord(Event *event, void *stream) {
  if (!fake().validStream(stream))
    return kInvalidValue;
  return fake().record(event, stream);
}
EXPORT int cuEventElapsedTime(float *milliseconds, Event *start, Event *stop) {
  return fake().elapsed(milliseconds, start, stop);
}
EXPORT int cuMemcpyAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                         void *stream) {
  if (!fake().validStream(stream))
    return kInvalidValue;
  return fake().copyAny(reinterpret_cast<void *>(to),
                        reinterpret_cast<const void *>(from), bytes);
}
EXPORT int cuMemsetD32Async(CUdeviceptr to, unsigned value, size_t count,
                            void *) {
  return fake().fill(reinterpret_cast<void *>(to), value, 4, count);
}
EXPORT int cuMemsetD16Async(CUdeviceptr to, unsigned short value, size_t count,
                            void *) {
  return fake().fill(reinterpret_cast<void *>(to), value, 2, count);
}
EXPORT int cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned) {
  return cuMemAlloc_v2(pointer, bytes);
}
EXPORT int cuMemHostRegister_v2(void *, size_t, unsigned) { return kSuccess; }
EXPORT int cuMemHostUnregister(void *) { return kSuccess; }
EXPORT int cuStreamCreate(void **stream, unsigned) {
  return fake().createStream(stream);
}
EXPORT int cuStreamDestroy_v2(void *stream) {
  return fake().destroyStream(stream);
}
EXPORT int cuStreamWaitEvent(void *stream, Event *event, unsigned) {
  return fake().validStream(stream) ? fake().queryEvent(event) : kInvalidValue;
}
EXPORT int cuEventQuery(Event *event) { return fake().queryEvent(event); }
EXPORT int cuGetErrorString(int result, const char **text) {
  *text = errorString(result);
  return kSuccess;
}
#endif // NABLA_FAKE_CUDA

#ifdef NABLA_FAKE_HIP
EXPORT int hipInit(unsigned) { return kSuccess; }
EXPORT int hipGetDeviceCount(int *count) {
  *count = 1;
  return kSuccess;
}
EXPORT int hipSetDevice(int index) {
  return index == 0 ? kSuccess : kInvalidValue;
}
EXPORT int hipDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "Nabla fake HIP device");
  return kSuccess;
}
EXPORT int hipModuleLoadData(Module **module, const void *image) {
  return fake().loadModule(module, image);
}
EXPORT int hipModuleUnload(Module *module) {
  return fake().unloadModule(module);
}
EXPORT int hipModuleGetFunction(Function **function, Module *module,
                                const char *name) {
  return fake().function(function, module, name);
}
EXPORT int hipModuleGetGlobal(void **, size_t *, Module *, const char *) {
  return kNotFound;
}
EXPORT int hipMalloc(void **pointer, size_t bytes) {
  return fake().allocate(pointer, bytes);
}
EXPORT int hipFree(void *pointer) { return fake().release(pointer); }
EXPORT int hipMemcpyHtoD(void *to, const void *from, size_t bytes) {
  return fake().copy(to, from, bytes, true);
}
EXPORT int hipMemcpyDtoH(void *to, void *from, size_t bytes) {
  return fake().copy(to, from, bytes, false);
}
EXPORT int hipModuleLaunchKernel(Function *function, unsigned gx, unsigned gy,
                                 unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned sharedBytes,
                                 void *stream, void **params, void **) {
  if (!fake().validStream(stream))
    return kInvalidValue;
  logLaunch(sharedBytes);
  return fake().launch(function, uint64_t(gx) * gy * gz * bx * by * bz, params);
}
EXPORT int hipStreamQuery(void *stream) {
  return fake().validStream(stream) ? fake().query() : kInvalidValue;
}
EXPORT int hipEventCreate(Event **event) { return fake().createEvent(event); }
EXPORT int hipEventDestroy(Event *event) { return fake().destroyEvent(event); }
EXPORT int hipEventRecord(Event *event, void *stream) {
  if (!fake().validStream(stream))
    return kInvalidValue;
  return fake().record(event, stream);
}
EXPORT int hipEventElapsedTime(float *milliseconds, Event *start, Event *stop) {
  return fake().elapsed(milliseconds, start, stop);
}
EXPORT int hipMemcpyAsync(void *to, const void *from, size_t bytes, int kind,
                          void *stream) {
  if (!fake().validStream(stream) || kind != 4) // hipMemcpyDefault
    return kInvalidValue;
  return fake().copyAny(to, from, bytes);
}
EXPORT int hipMemsetD32Async(void *to, int value, size_t count, void *) {
  return fake().fill(to, static_cast<uint32_t>(value), 4, count);
}
EXPORT int hipMemsetD16Async(void *to, unsigned short value, size_t count,
                             void *) {
  return fake().fill(to, value, 2, count);
}
EXPORT int hipMallocManaged(void **pointer, size_t bytes, unsigned) {
  return fake().allocate(pointer, bytes);
}
EXPORT int hipHostRegister(void *, size_t, unsigned) { return kSuccess; }
EXPORT int hipHostUnregister(void *) { return kSuccess; }
EXPORT int hipStreamCreate(void **stream) {
  return fake().createStream(stream);
}
EXPORT int hipStreamDestroy(void *stream) {
  return fake().destroyStream(stream);
}
EXPORT int hipStreamWaitEvent(void *stream, Event *event, unsigned) {
  return fake().validStream(stream) ? fake().queryEvent(event) : kInvalidValue;
}
EXPORT int hipEventCreateWithFlags(Event **event, unsigned) {
  return fake().createEvent(event);
}
EXPORT int hipEventQuery(Event *event) { return fake().queryEvent(event); }
EXPORT const char *hipGetErrorString(int result) { return errorString(result); }
#endif // NABLA_FAKE_HIP
