//===- HostBackend.h - The GPU runtime behind the mgpu* C API ---*- C++ -*-===//
//
// libnabla_mgpu.so implements the C API that upstream's gpu-to-llvm lowering
// calls (mgpuModuleLoad, mgpuLaunchKernel, mgpuMemAlloc, ...). Each entry
// point forwards to one HostBackend: Vulkan (the default; Mesa's lavapipe on
// a machine without a GPU), CUDA or HIP, each loading its driver at run time.
//
// The C API has no way to return an error, so a backend that cannot do what
// it was asked prints `nabla_mgpu: error: <message>` on stderr and ends the
// process with status 1 (after flushing stdout), the behaviour nabla-run and
// mlir-runner users need: a clear message and a non-zero exit, never a crash
// or a hang (every wait has a timeout, $NABLA_TIMEOUT seconds, default 60).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_MGPU_HOSTBACKEND_H
#define NABLA_LIB_RUNTIME_MGPU_HOSTBACKEND_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nabla::mgpu {

/// Prints `nabla_mgpu: error: <message>` and exits with status 1.
[[noreturn]] void fatal(const std::string &message);

/// Seconds every wait for the device may take ($NABLA_TIMEOUT, default 60).
unsigned timeoutSeconds();

struct LaunchSize {
  uint64_t x = 1, y = 1, z = 1;
};

/// One GPU runtime. Every method either succeeds or calls fatal(); methods
/// may be called from several threads (async.execute regions) and serialize
/// themselves.
class HostBackend {
public:
  virtual ~HostBackend();
  /// "vulkan", "cuda" or "hip".
  virtual const char *name() const = 0;

  /// Loads a module from a gpu.binary object of `size` bytes (0: unknown,
  /// e.g. NUL-terminated PTX for mgpuModuleLoadJIT).
  virtual void *loadModule(const void *data, size_t size) = 0;
  virtual void unloadModule(void *module) = 0;
  virtual void *getFunction(void *module, const char *name) = 0;
  /// Launches `function` with the flat LLVM arguments `params` (each a
  /// pointer to one argument's value; `count` of them).
  virtual void launch(void *function, LaunchSize grid, LaunchSize block,
                      uint32_t sharedMemoryBytes, void *stream, void **params,
                      size_t count) = 0;

  virtual void *createStream() = 0;
  virtual void destroyStream(void *stream) = 0;
  virtual void synchronizeStream(void *stream) = 0;
  virtual void waitEvent(void *stream, void *event) = 0;
  virtual void *createEvent() = 0;
  virtual void destroyEvent(void *event) = 0;
  virtual void synchronizeEvent(void *event) = 0;
  virtual void recordEvent(void *event, void *stream) = 0;

  /// Device memory that later launches and copies accept.
  virtual void *allocate(uint64_t bytes, void *stream, bool hostShared) = 0;
  virtual void free(void *pointer, void *stream) = 0;
  virtual void copy(void *destination, const void *source, size_t bytes,
                    void *stream) = 0;
  /// Sets `count` elements of `width` bytes (2 or 4) to `value`.
  virtual void fill(void *destination, uint32_t value, unsigned width,
                    size_t count, void *stream) = 0;
  virtual void registerHostMemory(void *pointer, uint64_t bytes) = 0;
  virtual void unregisterHostMemory(void *pointer) = 0;
  /// Selects the device later calls use (before the first use only).
  virtual void setDefaultDevice(int device) = 0;
};

std::unique_ptr<HostBackend> createVulkanHostBackend();
std::unique_ptr<HostBackend> createCUDAHostBackend();
std::unique_ptr<HostBackend> createHIPHostBackend();

} // namespace nabla::mgpu

#endif // NABLA_LIB_RUNTIME_MGPU_HOSTBACKEND_H
