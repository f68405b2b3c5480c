//===- MGPUWrappers.cpp - The mgpu* C API of libnabla_mgpu.so -------------===//
//
// The entry points upstream's gpu-to-llvm lowering (and the gpu.binary /
// gpu.launch_func translation to LLVM IR) calls, with the signatures of MLIR
// 22, each forwarding to the process's HostBackend. The backend is chosen
// once: $NABLA_TARGET (vulkan, cuda, hip) if set, otherwise from the first
// module loaded (a CUDA or AMDGPU ELF, a fatbin or PTX select CUDA or HIP;
// anything else, such as SPIR-V, Vulkan), and Vulkan when memory is used
// before any module is loaded. $NABLA_DEVICE selects the device index.
//
// The backend is not destroyed by a static destructor: a JIT's global
// destructors (which unload modules) may run after this library's. A runner
// that knows when the program is over (nabla-run, after the engine's
// destructors) calls nabla_mgpu_shutdown, which destroys what the program
// left and closes the device.
//
//===----------------------------------------------------------------------===//

#include "HostBackend.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#define NABLA_MGPU_EXPORT extern "C" __attribute__((visibility("default")))

using namespace nabla::mgpu;

nabla::mgpu::HostBackend::~HostBackend() = default;

void nabla::mgpu::fatal(const std::string &message) {
  std::cout.flush();
  std::fflush(nullptr);
  std::fprintf(stderr, "nabla_mgpu: error: %s\n", message.c_str());
  std::fflush(stderr);
  // No static destructors: the failing call may hold a backend's lock.
  std::_Exit(1);
}

unsigned nabla::mgpu::timeoutSeconds() {
  static unsigned seconds = [] {
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
  }();
  return seconds;
}

namespace {

std::mutex selection;
HostBackend *backend = nullptr;
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

HostBackend &getBackend(const void *data = nullptr, size_t size = 0) {
  std::lock_guard<std::mutex> lock(selection);
  if (backend)
    return *backend;
  const char *target = std::getenv("NABLA_TARGET");
  std::string name = target && *target ? target : guessBackend(data, size);
  std::unique_ptr<HostBackend> created;
  if (name == "vulkan")
    created = createVulkanHostBackend();
  else if (name == "cuda")
    created = createCUDAHostBackend();
  else if (name == "hip")
    created = createHIPHostBackend();
  else
    fatal("$NABLA_TARGET must be vulkan, cuda or hip, not '" + name + "'");
  if (defaultDevice < 0)
    if (const char *index = std::getenv("NABLA_DEVICE"); index && *index)
      defaultDevice = std::atoi(index);
  if (defaultDevice >= 0)
    created->setDefaultDevice(defaultDevice);
  backend = created.release();
  return *backend;
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

/// Destroys the backend, if one was created: its modules, memory and device.
/// A later call would open a new one.
NABLA_MGPU_EXPORT void nabla_mgpu_shutdown() {
  std::lock_guard<std::mutex> lock(selection);
  delete backend;
  backend = nullptr;
}

NABLA_MGPU_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  return getBackend(data, size).loadModule(data, size);
}

NABLA_MGPU_EXPORT void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return getBackend(data, 0).loadModule(data, 0);
}

NABLA_MGPU_EXPORT void mgpuModuleUnload(void *module) {
  getBackend().unloadModule(module);
}

NABLA_MGPU_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  return getBackend().getFunction(module, name);
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
  getBackend().launch(
      function, {uint64_t(gridX), uint64_t(gridY), uint64_t(gridZ)},
      {uint64_t(blockX), uint64_t(blockY), uint64_t(blockZ)},
      static_cast<uint32_t>(sharedMemoryBytes), stream, params, paramsCount);
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
  return getBackend().createStream();
}

NABLA_MGPU_EXPORT void mgpuStreamDestroy(void *stream) {
  getBackend().destroyStream(stream);
}

NABLA_MGPU_EXPORT void mgpuStreamSynchronize(void *stream) {
  getBackend().synchronizeStream(stream);
}

NABLA_MGPU_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  getBackend().waitEvent(stream, event);
}

NABLA_MGPU_EXPORT void *mgpuEventCreate() { return getBackend().createEvent(); }

NABLA_MGPU_EXPORT void mgpuEventDestroy(void *event) {
  getBackend().destroyEvent(event);
}

NABLA_MGPU_EXPORT void mgpuEventSynchronize(void *event) {
  getBackend().synchronizeEvent(event);
}

NABLA_MGPU_EXPORT void mgpuEventRecord(void *event, void *stream) {
  getBackend().recordEvent(event, stream);
}

NABLA_MGPU_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                     bool hostShared) {
  return getBackend().allocate(bytes, stream, hostShared);
}

NABLA_MGPU_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  getBackend().free(pointer, stream);
}

NABLA_MGPU_EXPORT void mgpuMemcpy(void *destination, void *source, size_t bytes,
                                  void *stream) {
  getBackend().copy(destination, source, bytes, stream);
}

NABLA_MGPU_EXPORT void mgpuMemset32(void *destination, unsigned int value,
                                    size_t count, void *stream) {
  getBackend().fill(destination, value, 4, count, stream);
}

NABLA_MGPU_EXPORT void mgpuMemset16(void *destination, unsigned short value,
                                    size_t count, void *stream) {
  getBackend().fill(destination, value, 2, count, stream);
}

NABLA_MGPU_EXPORT void mgpuMemHostRegister(void *pointer, uint64_t bytes) {
  getBackend().registerHostMemory(pointer, bytes);
}

NABLA_MGPU_EXPORT void mgpuMemHostUnregister(void *pointer) {
  getBackend().unregisterHostMemory(pointer);
}

NABLA_MGPU_EXPORT void
mgpuMemHostRegisterMemRef(int64_t rank, MemRefDescriptor<char, 1> *descriptor,
                          int64_t elementBytes) {
  const int64_t *sizes = descriptor->sizes;
  char *start = descriptor->aligned + descriptor->offset * elementBytes;
  getBackend().registerHostMemory(
      start, spannedBytes(rank, sizes, sizes + rank, elementBytes));
}

NABLA_MGPU_EXPORT void
mgpuMemHostUnregisterMemRef(int64_t /*rank*/,
                            MemRefDescriptor<char, 1> *descriptor,
                            int64_t elementBytes) {
  getBackend().unregisterHostMemory(descriptor->aligned +
                                    descriptor->offset * elementBytes);
}

NABLA_MGPU_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  {
    std::lock_guard<std::mutex> lock(selection);
    defaultDevice = device;
    if (!backend)
      return;
  }
  getBackend().setDefaultDevice(device);
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
