//===- Device.h - The device layer: one interface over every driver -*- C++
//-*-===//
//
// A Device is one GPU (or Mesa's lavapipe) behind a small set of objects, in
// the shape of CUDA's driver API and IREE's HAL: modules and their kernels,
// device memory, copies, launches, streams and events. It is implemented once
// per driver (Vulkan; CUDA and HIP sharing one implementation over a table of
// driver calls, lib/Runtime/Driver) and everything that runs kernels sits on
// top of it: the manifest-level launch of nabla-run, nabla-launch and Python
// (KernelLaunch.h) and the mgpu* C API of libnabla_mgpu.so, a thin shim.
//
// Every driver is loaded at run time (dlopen), so builds need no GPU, driver
// or driver library, and a missing driver is an error, not a failed start.
// Methods return Error / Expected (Error.h) and never print or exit; every
// wait for the device gives up after timeout() seconds. Methods may be
// called from several threads and serialize themselves.
//
// Kernel arguments are the flat LLVM arguments of the launch, as upstream's
// gpu-to-llvm lowering passes them: one pointer per argument value, a memref
// as its descriptor's fields (allocated, aligned, offset, sizes, strides).
// CUDA and HIP pass them to the kernel as they are. A Vulkan kernel takes
// descriptor bindings instead; its device maps the arguments onto them with
// the kernel's parameter list (KernelParam), which a module either carries (a
// Nabla host object, HostObject.h) or is given at load (ModuleImage::abi).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_DEVICE_H
#define NABLA_RUNTIME_DEVICE_H

#include "nabla/Runtime/Error.h"
#include "nabla/Runtime/LoopLimitReport.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nabla::runtime {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t product() const { return uint64_t(x) * y * z; }
};

/// One kernel parameter as a launch passes it: the kernel ABI every driver
/// shares, read from a manifest (kernelABI in KernelLaunch.h) or from a host
/// object's launch description.
struct KernelParam {
  bool buffer = false;
  /// Buffers: the element type; scalars: the type (MLIR names: f32, index).
  std::string type;
  /// Buffers: extents, -1 where dynamic.
  std::vector<int64_t> shape;
  /// Buffers: a static non-identity layout, which the kernel applies to the
  /// buffer from the aligned pointer on (not to packed elements).
  bool strided = false;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// Flat LLVM arguments of the parameter: a memref descriptor's 3 + 2 *
  /// rank fields, or the scalar.
  size_t llvmArgumentCount() const { return buffer ? 3 + 2 * shape.size() : 1; }
  /// Whether a dynamic memref of rank >= 2 that SPIR-V receives flattened,
  /// with one size binding per dynamic extent (docs/Targets.md).
  bool hasSizeBindings() const;
};

/// Kernel name → its parameters.
using KernelABI = std::map<std::string, std::vector<KernelParam>>;

/// The printf buffer of a SPIR-V module (gpu.printf lowered for Vulkan): the
/// kernels that have one (their last binding), the format strings its
/// records index and its capacity in 32-bit words.
struct PrintfLayout {
  uint32_t capacity = 0;
  std::vector<std::string> formats;
  std::vector<std::string> kernels;
};

/// A module global that a SPIR-V module keeps in a buffer its loader owns
/// (nabla-bind-module-globals): a `__device__` variable or a large constant
/// table. The buffer lives as long as the module and starts from `initial`
/// (zeros past its end).
struct ModuleGlobal {
  std::string name;
  /// The element type (MLIR name).
  std::string type;
  uint64_t bytes = 0;
  bool constant = false;
  std::vector<uint8_t> initial;
};

/// The module globals of a SPIR-V module and, per kernel, the globals it
/// binds, in the order of its global bindings (after its size bindings,
/// before its printf buffer).
struct ModuleGlobals {
  std::vector<ModuleGlobal> buffers;
  std::map<std::string, std::vector<std::string>> kernels;

  const ModuleGlobal *find(const std::string &name) const {
    for (const ModuleGlobal &global : buffers)
      if (global.name == name)
        return &global;
    return nullptr;
  }
  /// The globals `kernel` binds (none when it is not listed).
  const std::vector<std::string> &boundBy(const std::string &kernel) const {
    static const std::vector<std::string> none;
    auto it = kernels.find(kernel);
    return it == kernels.end() ? none : it->second;
  }
};

/// Bytes of one element of MLIR type `type` in host memory (index: 8) and
/// on a SPIR-V device (index: 4); 0 for an unknown type.
unsigned hostElementBytes(const std::string &type);
unsigned deviceElementBytes(const std::string &type);

/// What a device is and what it can do.
struct DeviceInfo {
  /// "vulkan", "cuda" or "hip".
  std::string backend;
  /// Human-readable device name.
  std::string name;
  /// Chip to compile for ("sm_90", "gfx90a"); "" for SPIR-V devices.
  std::string chip;
  /// Lanes per subgroup (warp, wavefront).
  unsigned subgroupSize = 32;
  uint64_t maxThreadsPerBlock = 1024;
  std::array<uint32_t, 3> maxBlock = {1024, 1024, 64};
  std::array<uint32_t, 3> maxGrid = {0x7fffffff, 65535, 65535};
  /// Whether a launch receives its dynamic shared memory (CUDA, HIP); a
  /// Vulkan kernel has its size compiled in.
  bool dynamicSharedMemoryAtLaunch = false;
  /// Why the device cannot time kernels on its own clock; "" when it can.
  std::string timingProblem;
  /// The bytes of memory buffers are allocated from, where the driver says
  /// (Vulkan: the largest heap of the buffers' memory type); 0 if unknown.
  uint64_t memoryBytes = 0;
};

/// The object a module is loaded from.
struct ModuleImage {
  const void *data = nullptr;
  /// Bytes at `data`; 0 for NUL-terminated text (PTX).
  size_t size = 0;
  /// The kernels' parameters, for an image that does not carry them (bare
  /// SPIR-V); null otherwise.
  const KernelABI *abi = nullptr;
  /// Its printf buffer, for bare SPIR-V whose kernels print; null otherwise.
  const PrintfLayout *printf = nullptr;
  /// Its module globals, for bare SPIR-V that has some; null otherwise.
  const ModuleGlobals *globals = nullptr;
};

/// A module global: its device address and size.
struct GlobalSymbol {
  void *address = nullptr;
  size_t bytes = 0;
};

struct LaunchConfig {
  Dim3 grid, block;
  uint32_t sharedMemoryBytes = 0;
  /// The stream to launch on (null: the default one).
  void *stream = nullptr;
  /// When set, the launch waits for the kernel and stores its time on the
  /// device's clock, in nanoseconds (CUDA/HIP events, Vulkan timestamps).
  double *kernelNs = nullptr;
};

class Device {
public:
  virtual ~Device();

  virtual const DeviceInfo &info() const = 0;
  /// Seconds every wait for the device may take before it fails (default
  /// 60).
  unsigned timeout() const { return timeoutSeconds; }
  void setTimeout(unsigned seconds) { timeoutSeconds = seconds ? seconds : 1; }
  /// Driver calls that cannot be interrupted (creating a Vulkan pipeline:
  /// the driver compiles the shader, 130 s for a large adjoint on lavapipe)
  /// end the process with an error past the timeout when this is set. The
  /// tools set it; a library caller (Python) waits instead.
  bool endsProcessOnTimeout() const { return endProcessOnTimeout; }
  void setEndProcessOnTimeout(bool end) { endProcessOnTimeout = end; }

  /// Loads a module; its handle stays valid until unloadModule.
  virtual Expected<void *> loadModule(const ModuleImage &image) = 0;
  virtual Error unloadModule(void *module) = 0;
  /// A kernel of a loaded module, valid while the module is loaded.
  virtual Expected<void *> getFunction(void *module,
                                       const std::string &name) = 0;
  /// A global of a loaded module (CUDA, HIP; on Vulkan the module globals
  /// its loader keeps in buffers, ModuleGlobals).
  virtual Expected<GlobalSymbol> getGlobal(void *module,
                                           const std::string &symbol) = 0;
  /// Launches `function` with `count` flat LLVM arguments, each a pointer
  /// to the argument's value.
  virtual Error launch(void *function, const LaunchConfig &config, void **args,
                       size_t count) = 0;

  virtual Expected<void *> createStream() = 0;
  virtual Error destroyStream(void *stream) = 0;
  /// Waits until the work queued on `stream` (null: the default stream) has
  /// finished.
  virtual Error synchronize(void *stream) = 0;
  virtual Expected<void *> createEvent() = 0;
  virtual Error destroyEvent(void *event) = 0;
  virtual Error recordEvent(void *event, void *stream) = 0;
  /// Makes later work on `stream` wait for `event`.
  virtual Error waitEvent(void *stream, void *event) = 0;
  virtual Error synchronizeEvent(void *event) = 0;

  /// Device memory that launches and copies accept (`hostShared`: also
  /// addressable by the host, where the driver has such memory).
  virtual Expected<void *> allocate(uint64_t bytes, void *stream,
                                    bool hostShared) = 0;
  virtual Error free(void *pointer, void *stream) = 0;
  /// Copies between host and device memory in any direction (unified
  /// addressing), in `stream`'s order.
  virtual Error copy(void *destination, const void *source, size_t bytes,
                     void *stream) = 0;
  /// Sets `count` elements of `width` bytes (2 or 4) to `value`.
  virtual Error fill(void *destination, uint32_t value, unsigned width,
                     size_t count, void *stream) = 0;
  virtual Error registerHostMemory(void *pointer, uint64_t bytes) = 0;
  virtual Error unregisterHostMemory(void *pointer) = 0;

  /// Checks that `bytes` at `pointer` are memory of this device that a
  /// launch can take in place (a CuPy array), and waits for the producer's
  /// `stream` (0: none; 1 and 2: CUDA's legacy and per-thread streams). Only
  /// CUDA takes such memory; the default says so.
  virtual Error adoptExternalBuffer(uint64_t pointer, uint64_t bytes,
                                    uint64_t stream);

private:
  unsigned timeoutSeconds = 60;
  bool endProcessOnTimeout = false;
};

/// Prints "error: <message>" and ends the process with status 1 at once: a
/// device that timed out may still run the work, so nothing it holds can be
/// released safely (the tools' reaction to a timeout).
[[noreturn]] void endProcessAfterTimeout(const std::string &message);

/// While alive, watches a driver call of `device` that cannot be
/// interrupted: past the device's timeout, if the device ends the process on
/// timeouts, prints "error: <what> did not finish within N s" and exits 1.
class UninterruptibleCallGuard {
public:
  UninterruptibleCallGuard(const Device &device, std::string what);
  ~UninterruptibleCallGuard();
  UninterruptibleCallGuard(const UninterruptibleCallGuard &) = delete;
  UninterruptibleCallGuard &operator=(const UninterruptibleCallGuard &) =
      delete;

private:
  struct State;
  std::unique_ptr<State> state;
};

/// The loop iterations after which device `name` ends every loop of a shader
/// invocation: 65535 for Mesa's llvmpipe (lavapipe; gallivm's
/// LP_MAX_TGSI_LOOP_ITERATIONS), 0 for devices without such a limit. Kernels
/// compiled for a device with one count their iterations
/// (nabla-detect-loop-limit) and its launches fail when a thread reaches it.
int64_t loopIterationLimit(const std::string &name);

/// Opens device `index` (-1: the preferred one) of `backend` ("vulkan",
/// "cuda" or "hip").
Expected<std::unique_ptr<Device>> openDevice(const std::string &backend,
                                             int index);
/// The same, for tools and Python: index -1 takes $NABLA_DEVICE when set;
/// null with `error` when the device cannot be opened.
std::unique_ptr<Device> openDevice(const std::string &backend, int index,
                                   std::string &error);
Expected<std::unique_ptr<Device>> openVulkanDevice(int index);
Expected<std::unique_ptr<Device>> openCUDADevice(int index);
Expected<std::unique_ptr<Device>> openHIPDevice(int index);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_DEVICE_H
