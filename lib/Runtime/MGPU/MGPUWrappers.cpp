//===- MGPUWrappers.cpp - The mgpu* C API of libnabla_mgpu.so -------------===//
//
// The entry points upstream's gpu-to-llvm lowering (and the gpu.binary /
// gpu.launch_func translation to LLVM IR) calls, with the signatures of MLIR
// 22: a thin shim over the process's runtime::Device (nabla/Runtime/Device.h).
// The device is chosen once: $NABLA_TARGET (vulkan, cuda, hip) if set,
// otherwise from the first module loaded (a CUDA or AMDGPU ELF, a fatbin or
// PTX select CUDA or HIP; anything else, such as SPIR-V, Vulkan), and Vulkan
// when memory is used before any module is loaded. $NABLA_DEVICE selects the
// device index.
//
// The C API has no way to return an error, so a call whose device operation
// fails prints `nabla_mgpu: error: <message>` on stderr and ends the process
// with status 1 (after flushing stdout), the behaviour nabla-run and
// mlir-runner users need: a clear message and a non-zero exit, never a crash
// or a hang (every wait has a timeout, $NABLA_TIMEOUT seconds, default 60).
// This is the only place where a device error ends the process.
//
// The device is not destroyed by a static destructor: a JIT's global
// destructors (which unload modules) may run after this library's. A runner
// that knows when the program is over (nabla-run, after the engine's
// destructors) calls nabla_mgpu_shutdown, which destroys what the program
// left and closes the device.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Device.h"
#include "nabla/Runtime/TapeSize.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#define NABLA_MGPU_EXPORT extern "C" __attribute__((visibility("default")))

using namespace nabla::runtime;

namespace {

/// Prints `nabla_mgpu: error: <message>` and exits with status 1.
[[noreturn]] void fatal(const std::string &message) {
  std::cout.flush();
  std::fflush(nullptr);
  std::fprintf(stderr, "nabla_mgpu: error: %s\n", message.c_str());
  std::fflush(stderr);
  // No static destructors: the failing call may hold a device's lock.
  std::_Exit(1);
}

/// Seconds every wait for the device may take ($NABLA_TIMEOUT, default 60).
unsigned timeoutSeconds() {
  const char *text = std::getenv("NABLA_TIMEOUT");
  if (!text || !*text)
    return 60u;
  char *end = nullptr;
  unsigned long value = std::strtoul(text, &end, 10);
  if (*end || value == 0 || value > 86400)
    fatal(std::string("$NABLA_TIMEOUT must be a number of seconds from 1 "
                      "to 86400, not '") +
          text + "'");
  return static_cast<unsigned>(value);
}

/// The operation's result; a failure ends the process.
template <typename T> T orFatal(Expected<T> result) {
  if (!result)
    fatal(result.takeError().message());
  return std::move(*result);
}
void orFatal(Error error) {
  if (error)
    fatal(error.message());
}

std::mutex selection;
Device *device = nullptr;
int defaultDevice = -1;

/// The backend a module's object needs, when $NABLA_TARGET does not say.
const char *guessBackend(const void *data, size_t size) {
  if (!data)
    return "vulkan";
  const auto *bytes = static_cast<const unsigned char *>(data);
  // Unknown sizes (PTX for mgpuModuleLoadJIT) are NUL-terminated text.
  size_t known = size ? size : std::strlen(static_cast<const char *>(data));
  if (known >= 20 && std::memcmp(bytes,
                                 "\x7f"
                                 "ELF",
                                 4) == 0) {
    unsigned machine = bytes[18] | (bytes[19] << 8);
    if (machine == 190) // EM_CUDA
      return "cuda";
    if (machine == 224) // EM_AMDGPU
      return "hip";
  }
  if (known >= 4 && bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 &&
      bytes[3] == 0xba) // fatbin
    return "cuda";
  std::string head(reinterpret_cast<const char *>(bytes),
                   std::min<size_t>(known, 4096));
  if (head.find(".version") != std::string::npos &&
      head.find(".target") != std::string::npos) // PTX
    return "cuda";
  return "vulkan";
}

Device &getDevice(const void *data = nullptr, size_t size = 0) {
  std::lock_guard<std::mutex> lock(selection);
  if (device)
    return *device;
  const char *target = std::getenv("NABLA_TARGET");
  std::string name = target && *target ? target : guessBackend(data, size);
  if (name != "vulkan" && name != "cuda" && name != "hip")
    fatal("$NABLA_TARGET must be vulkan, cuda or hip, not '" + name + "'");
  if (defaultDevice < 0)
    if (const char *index = std::getenv("NABLA_DEVICE"); index && *index)
      defaultDevice = std::atoi(index);
  std::unique_ptr<Device> opened = orFatal(openDevice(name, defaultDevice));
  opened->setTimeout(timeoutSeconds());
  device = opened.release();
  return *device;
}

/// The memref descriptor the runner utilities and upstream's wrappers use.
template <typename T, int Rank> struct MemRefDescriptor {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

/// Bytes a memref of `rank` spans from its aligned pointer's first element.
uint64_t spannedBytes(int64_t rank, const int64_t *sizes,
                      const int64_t *strides, int64_t elementBytes) {
  int64_t last = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0)
      return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return static_cast<uint64_t>((last + 1) * elementBytes);
}

} // namespace

/// Destroys the device, if one was opened: its modules, memory and the
/// device itself. A later call would open a new one.
/// Device allocations made through mgpuMemAlloc and not yet freed.
static std::atomic<int64_t> liveAllocations{0};

/// The number of device allocations the program has not freed.
NABLA_MGPU_EXPORT int64_t nabla_mgpu_live_allocations() {
  return liveAllocations.load();
}

NABLA_MGPU_EXPORT void nabla_mgpu_shutdown() {
  // $NABLA_MGPU_REPORT_LEAKS=1: say how many device allocations the program
  // left (the tests of host-level AD check that every gpu.alloc is freed).
  if (const char *report = std::getenv("NABLA_MGPU_REPORT_LEAKS");
      report && std::string(report) == "1" && liveAllocations.load() != 0)
    std::fprintf(stderr,
                 "nabla_mgpu: %lld device allocation(s) were not freed\n",
                 static_cast<long long>(liveAllocations.load()));
  std::lock_guard<std::mutex> lock(selection);
  delete device;
  device = nullptr;
}

NABLA_MGPU_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  return orFatal(getDevice(data, size).loadModule({data, size, nullptr}));
}

NABLA_MGPU_EXPORT void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return orFatal(getDevice(data, 0).loadModule({data, 0, nullptr}));
}

NABLA_MGPU_EXPORT void mgpuModuleUnload(void *module) {
  orFatal(getDevice().unloadModule(module));
}

NABLA_MGPU_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  return orFatal(getDevice().getFunction(module, name ? name : ""));
}

NABLA_MGPU_EXPORT void
mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                 intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                 int32_t sharedMemoryBytes, void *stream, void **params,
                 void ** /*extra*/, size_t paramsCount) {
  for (intptr_t size : {gridX, gridY, gridZ, blockX, blockY, blockZ})
    if (size <= 0 || size > UINT32_MAX)
      fatal("launch with a grid or block size of " + std::to_string(size) +
            " (each must be from 1 to 2^32 - 1)");
  if (sharedMemoryBytes < 0)
    fatal("launch with negative dynamic shared memory");
  LaunchConfig config;
  config.grid = {uint32_t(gridX), uint32_t(gridY), uint32_t(gridZ)};
  config.block = {uint32_t(blockX), uint32_t(blockY), uint32_t(blockZ)};
  config.sharedMemoryBytes = static_cast<uint32_t>(sharedMemoryBytes);
  config.stream = stream;
  orFatal(getDevice().launch(function, config, params, paramsCount));
}

NABLA_MGPU_EXPORT void mgpuLaunchClusterKernel(
    void *function, intptr_t clusterX, intptr_t clusterY, intptr_t clusterZ,
    intptr_t gridX, intptr_t gridY, intptr_t gridZ, intptr_t blockX,
    intptr_t blockY, intptr_t blockZ, int32_t sharedMemoryBytes, void *stream,
    void **params, void **extra, size_t paramsCount) {
  if (clusterX != 1 || clusterY != 1 || clusterZ != 1)
    fatal("thread block clusters are not supported by libnabla_mgpu");
  mgpuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ,
                   sharedMemoryBytes, stream, params, extra, paramsCount);
}

NABLA_MGPU_EXPORT void *mgpuStreamCreate() {
  return orFatal(getDevice().createStream());
}

NABLA_MGPU_EXPORT void mgpuStreamDestroy(void *stream) {
  orFatal(getDevice().destroyStream(stream));
}

NABLA_MGPU_EXPORT void mgpuStreamSynchronize(void *stream) {
  orFatal(getDevice().synchronize(stream));
}

NABLA_MGPU_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  orFatal(getDevice().waitEvent(stream, event));
}

NABLA_MGPU_EXPORT void *mgpuEventCreate() {
  return orFatal(getDevice().createEvent());
}

NABLA_MGPU_EXPORT void mgpuEventDestroy(void *event) {
  orFatal(getDevice().destroyEvent(event));
}

NABLA_MGPU_EXPORT void mgpuEventSynchronize(void *event) {
  orFatal(getDevice().synchronizeEvent(event));
}

NABLA_MGPU_EXPORT void mgpuEventRecord(void *event, void *stream) {
  orFatal(getDevice().recordEvent(event, stream));
}

NABLA_MGPU_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                     bool hostShared) {
  void *pointer = orFatal(getDevice().allocate(bytes, stream, hostShared));
  ++liveAllocations;
  return pointer;
}

NABLA_MGPU_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  orFatal(getDevice().free(pointer, stream));
  --liveAllocations;
}

NABLA_MGPU_EXPORT void mgpuMemcpy(void *destination, void *source, size_t bytes,
                                  void *stream) {
  orFatal(getDevice().copy(destination, source, bytes, stream));
}

NABLA_MGPU_EXPORT void mgpuMemset32(void *destination, unsigned int value,
                                    size_t count, void *stream) {
  orFatal(getDevice().fill(destination, value, 4, count, stream));
}

NABLA_MGPU_EXPORT void mgpuMemset16(void *destination, unsigned short value,
                                    size_t count, void *stream) {
  orFatal(getDevice().fill(destination, value, 2, count, stream));
}

NABLA_MGPU_EXPORT void mgpuMemHostRegister(void *pointer, uint64_t bytes) {
  orFatal(getDevice().registerHostMemory(pointer, bytes));
}

NABLA_MGPU_EXPORT void mgpuMemHostUnregister(void *pointer) {
  orFatal(getDevice().unregisterHostMemory(pointer));
}

NABLA_MGPU_EXPORT void
mgpuMemHostRegisterMemRef(int64_t rank, MemRefDescriptor<char, 1> *descriptor,
                          int64_t elementBytes) {
  const int64_t *sizes = descriptor->sizes;
  char *start = descriptor->aligned + descriptor->offset * elementBytes;
  orFatal(getDevice().registerHostMemory(
      start, spannedBytes(rank, sizes, sizes + rank, elementBytes)));
}

NABLA_MGPU_EXPORT void
mgpuMemHostUnregisterMemRef(int64_t /*rank*/,
                            MemRefDescriptor<char, 1> *descriptor,
                            int64_t elementBytes) {
  orFatal(getDevice().unregisterHostMemory(descriptor->aligned +
                                           descriptor->offset * elementBytes));
}

//===----------------------------------------------------------------------===//
// The helpers upstream's ROCm runtime wrappers export for their tests: the
// device's view of registered host memory, as a 1-D memref. Every backend
// here addresses registered host memory by its host address (Vulkan binds
// the registered range itself; CUDA and HIP map it at the same address under
// unified addressing), so the view is the descriptor given. Each exists with
// the descriptor's fields as arguments (the default lowering of a func.call)
// and, as `_mlir_ciface_`, by pointer.
//===----------------------------------------------------------------------===//

#define NABLA_MGPU_DEVICE_MEMREF(NAME, TYPE)                                   \
  NABLA_MGPU_EXPORT MemRefDescriptor<TYPE, 1> mgpuMemGetDeviceMemRef1d##NAME(  \
      TYPE *allocated, TYPE *aligned, int64_t offset, int64_t size,            \
      int64_t stride) {                                                        \
    return {allocated, aligned, offset, {size}, {stride}};                     \
  }                                                                            \
  NABLA_MGPU_EXPORT void _mlir_ciface_mgpuMemGetDeviceMemRef1d##NAME(          \
      MemRefDescriptor<TYPE, 1> *result, MemRefDescriptor<TYPE, 1> *memref) {  \
    *result = *memref;                                                         \
  }
NABLA_MGPU_DEVICE_MEMREF(Float, float)
NABLA_MGPU_DEVICE_MEMREF(Int32, int32_t)
#undef NABLA_MGPU_DEVICE_MEMREF

/// Selects the device later calls use: before the first use only.
NABLA_MGPU_EXPORT void mgpuSetDefaultDevice(int32_t index) {
  std::lock_guard<std::mutex> lock(selection);
  if (device && index != defaultDevice)
    fatal("mgpuSetDefaultDevice(" + std::to_string(index) + ") after the " +
          device->info().backend + " device was opened");
  defaultDevice = index;
}

/// Before a host program allocates a kernel's global-memory tape
/// (nabla-materialize-tapes puts the call before the gpu.alloc): a tape of
/// `elements` int32 words over the limit ends the program with the size it
/// needed, before anything is allocated or launched. The limit is
/// $NABLA_MAX_TAPE_BYTES (nabla-run --max-tape-bytes sets it), else a quarter
/// of the device's memory (1 GiB when unknown), as nabla-run's own launches.
NABLA_MGPU_EXPORT void nabla_mgpu_check_tape(int64_t elements,
                                             const char *kernel,
                                             const char *formula) {
  uint64_t cap = 0;
  if (const char *text = std::getenv("NABLA_MAX_TAPE_BYTES"); text && *text) {
    char *end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (*end || value == 0)
      fatal(std::string("$NABLA_MAX_TAPE_BYTES must be a positive number of "
                        "bytes, not '") +
            text + "'");
    cap = value;
  } else {
    cap = defaultMaxTapeBytes(getDevice().info().memoryBytes);
  }
  bool overflows = elements < 0 || uint64_t(elements) > UINT64_MAX / 4;
  if (!overflows && 4 * uint64_t(elements) <= cap)
    return;
  fatal(std::string("kernel '") + (kernel ? kernel : "") +
        "' needs a global-memory tape of " +
        (overflows ? std::string("more than 2^63")
                   : std::to_string(4 * uint64_t(elements))) +
        " bytes (4 * (" + (formula ? formula : "") +
        ") per thread), over the limit of " + std::to_string(cap) +
        " bytes ($NABLA_MAX_TAPE_BYTES, nabla-run --max-tape-bytes)");
}

/// The capacity a host program gives a growing tape (slots per execution of
/// a loop whose trip count is known only as it runs): $NABLA_TAPE_CAPACITY,
/// else 32, as nabla-run's own launches start with.
NABLA_MGPU_EXPORT int64_t nabla_mgpu_tape_capacity() {
  return static_cast<int64_t>(initialTapeCapacity());
}

/// After a synchronous launch with a growing tape at device address `tape`:
/// a thread that needed more than `capacity` slots raised the tape's second
/// word to what it needed; the program ends naming it (a host program
/// cannot run the launch again from its inputs, as nabla-run does).
NABLA_MGPU_EXPORT void nabla_mgpu_check_tape_overflow(int64_t tape,
                                                      int64_t capacity,
                                                      const char *kernel) {
  int32_t needed = 0;
  orFatal(getDevice().copy(&needed, reinterpret_cast<char *>(tape) + 4, 4,
                           nullptr));
  orFatal(getDevice().synchronize(nullptr));
  if (needed <= capacity)
    return;
  fatal(std::string("kernel '") + (kernel ? kernel : "") +
        "' needed a growing global-memory tape of " + std::to_string(needed) +
        " slots per loop, more than its capacity of " +
        std::to_string(capacity) +
        " (its gradients are NaN): run again with "
        "NABLA_TAPE_CAPACITY=" +
        std::to_string(needed));
}

//===----------------------------------------------------------------------===//
// The helpers upstream's Vulkan runner wrappers export for their tests, so
// that such programs run unchanged: fill a whole memref with one value.
//===----------------------------------------------------------------------===//

namespace {
template <typename T, int Rank>
void fillMemRef(MemRefDescriptor<T, Rank> *memref, T value) {
  int64_t count = 1;
  for (int d = 0; d < Rank; ++d)
    count *= memref->sizes[d];
  std::fill_n(memref->aligned + memref->offset, count, value);
}
} // namespace

// Each helper exists twice: `_mlir_ciface_fillResource...` takes the memref
// descriptor by pointer (callers with C wrappers, as upstream's test
// pipeline requested) and `fillResource...` its fields as separate arguments
// (the default lowering of a func.call, as nabla-to-spirv produces).
#define NABLA_FILL_RESOURCE_1D(NAME, TYPE)                                     \
  NABLA_MGPU_EXPORT void _mlir_ciface_fillResource##NAME(                      \
      MemRefDescriptor<TYPE, 1> *memref, TYPE value) {                         \
    fillMemRef(memref, value);                                                 \
  }                                                                            \
  NABLA_MGPU_EXPORT void fillResource##NAME(TYPE *allocated, TYPE *aligned,    \
                                            int64_t offset, int64_t size,      \
                                            int64_t stride, TYPE value) {      \
    MemRefDescriptor<TYPE, 1> memref{                                          \
        allocated, aligned, offset, {size}, {stride}};                         \
    fillMemRef(&memref, value);                                                \
  }
#define NABLA_FILL_RESOURCE_2D(NAME, TYPE)                                     \
  NABLA_MGPU_EXPORT void _mlir_ciface_fillResource##NAME(                      \
      MemRefDescriptor<TYPE, 2> *memref, TYPE value) {                         \
    fillMemRef(memref, value);                                                 \
  }                                                                            \
  NABLA_MGPU_EXPORT void fillResource##NAME(                                   \
      TYPE *allocated, TYPE *aligned, int64_t offset, int64_t size0,           \
      int64_t size1, int64_t stride0, int64_t stride1, TYPE value) {           \
    MemRefDescriptor<TYPE, 2> memref{                                          \
        allocated, aligned, offset, {size0, size1}, {stride0, stride1}};       \
    fillMemRef(&memref, value);                                                \
  }
#define NABLA_FILL_RESOURCE_3D(NAME, TYPE)                                     \
  NABLA_MGPU_EXPORT void _mlir_ciface_fillResource##NAME(                      \
      MemRefDescriptor<TYPE, 3> *memref, TYPE value) {                         \
    fillMemRef(memref, value);                                                 \
  }                                                                            \
  NABLA_MGPU_EXPORT void fillResource##NAME(                                   \
      TYPE *allocated, TYPE *aligned, int64_t offset, int64_t size0,           \
      int64_t size1, int64_t size2, int64_t stride0, int64_t stride1,          \
      int64_t stride2, TYPE value) {                                           \
    MemRefDescriptor<TYPE, 3> memref{allocated,                                \
                                     aligned,                                  \
                                     offset,                                   \
                                     {size0, size1, size2},                    \
                                     {stride0, stride1, stride2}};             \
    fillMemRef(&memref, value);                                                \
  }
NABLA_FILL_RESOURCE_1D(1DFloat, float)
NABLA_FILL_RESOURCE_2D(2DFloat, float)
NABLA_FILL_RESOURCE_3D(3DFloat, float)
NABLA_FILL_RESOURCE_1D(1DInt, int32_t)
NABLA_FILL_RESOURCE_2D(2DInt, int32_t)
NABLA_FILL_RESOURCE_3D(3DInt, int32_t)
NABLA_FILL_RESOURCE_1D(1DInt8, int8_t)
NABLA_FILL_RESOURCE_2D(2DInt8, int8_t)
NABLA_FILL_RESOURCE_3D(3DInt8, int8_t)
#undef NABLA_FILL_RESOURCE_1D
#undef NABLA_FILL_RESOURCE_2D
#undef NABLA_FILL_RESOURCE_3D
