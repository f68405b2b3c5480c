//===- Device.h - One interface over Vulkan, CUDA and HIP -------*- C++ -*-===//
//
// A Device runs one compiled kernel with host arrays and scalars and copies
// the buffers back. Every back end loads its driver at run time (dlopen), so
// builds never need a GPU, a driver or their headers' libraries, and a
// missing driver is an error message, not a failed start.
//
// A launch may be repeated on the same device objects; every repeat starts
// from the same inputs (restored outside the timed interval), so the results
// are those of one launch and every repeat computes the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_DEVICE_H
#define NABLA_RUNTIME_DEVICE_H

#include "nabla/Runtime/Manifest.h"
#include "nabla/Runtime/Npy.h"
#include "nabla/Runtime/Timing.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nabla::runtime {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t product() const { return uint64_t(x) * y * z; }
};

/// Memory a buffer parameter already has on the device (a CuPy array's
/// `__cuda_array_interface__`): the launch passes `pointer` as the memref's
/// pointer, without allocating or copying, and the kernel updates it in
/// place. Only the CUDA back end takes it.
struct DeviceBuffer {
  uint64_t pointer = 0;
  uint64_t bytes = 0;
  /// The producer's stream to wait for before the launch (0: none; 1 and 2
  /// are CUDA's legacy and per-thread default streams).
  uint64_t stream = 0;
};

/// Host data of one kernel parameter. Buffers are updated in place by a
/// launch; scalars hold their value's little-endian bytes in the MLIR type
/// (index as 64 bits). A buffer with `onDevice` set has no host data: its
/// memory is `device` (`buffer` keeps dtype and shape only).
struct HostParam {
  const ParamInfo *info = nullptr;
  NpyArray buffer;
  uint8_t scalar[8] = {};
  unsigned scalarBytes = 0;
  bool onDevice = false;
  DeviceBuffer device;

  /// The scalar as a signed integer (integers and index only).
  int64_t scalarAsInteger() const;
};

/// A relocated object the loader writes into the module's patch global
/// `symbol` before the launch: the object's bytes, or for a pointer record the
/// device address of a copy of them. Writable objects are read back.
struct PatchObject {
  std::string key;
  std::string symbol;
  bool pointer = false;
  bool constant = false;
  NpyArray *object = nullptr;
};

/// What to launch: the kernel's manifest entry and its object.
struct LaunchSpec {
  const KernelInfo *kernel = nullptr;
  Dim3 grid, block;
  /// The target object: SPIR-V words, a cubin/PTX image or an hsaco.
  const std::vector<uint8_t> *image = nullptr;
  /// "spv", "cubin", "ptx" or "hsaco".
  std::string imageKind;
  /// Objects of `patch` records of the kernel's module.
  std::vector<PatchObject> patches;
  /// Seconds to wait for each repeat's completion before giving up.
  unsigned timeoutSeconds = 60;
  /// Bytes of dynamic shared memory of the launch (CUDA/HIP: the launch
  /// parameter; Vulkan: compiled into the SPIR-V, checked before).
  uint32_t dynamicSharedMemory = 0;
  /// Times the kernel runs, on one set of device objects. Before each repeat
  /// every buffer, table binding and writable patch object is written again
  /// from the host data, so each repeat sees the same inputs (a kernel that
  /// updates a buffer in place, or accumulates into it, does not see its own
  /// output) and the buffers read back are those of the last repeat, equal to
  /// a single launch's.
  unsigned repeat = 1;
  /// When set, the kernel time of every repeat is measured on the device's
  /// clock (Vulkan timestamps, CUDA/HIP events) and the uploads and the
  /// read-back on the host's; a device that cannot time kernels fails the
  /// launch with a message saying so.
  LaunchTiming *timing = nullptr;
};

class Device {
public:
  virtual ~Device();
  /// "vulkan", "cuda" or "hip".
  virtual std::string backend() const = 0;
  /// Human-readable device name.
  virtual std::string name() const = 0;
  /// Chip to compile for ("sm_90", "gfx90a"); "" for SPIR-V devices.
  virtual std::string chip() const = 0;
  /// Lanes per subgroup (warp, wavefront).
  virtual unsigned subgroupSize() const = 0;
  /// Runs the kernel `spec.repeat` times (timing it when `spec.timing` is
  /// set); on failure returns false and sets `error`. All device resources
  /// are released on every path.
  virtual bool launch(const LaunchSpec &spec, std::vector<HostParam> &params,
                      std::string &error) = 0;
};

/// False with `error` naming the first parameter that is a device buffer:
/// for the back ends that take host data only.
bool refuseDeviceBuffers(const std::vector<HostParam> &params,
                         const std::string &backend, std::string &error);

/// Opens device `index` (-1: the preferred one) of a back end; on failure
/// returns null and sets `error`.
std::unique_ptr<Device> createVulkanDevice(int index, std::string &error);
std::unique_ptr<Device> createCUDADevice(int index, std::string &error);
std::unique_ptr<Device> createHIPDevice(int index, std::string &error);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_DEVICE_H
