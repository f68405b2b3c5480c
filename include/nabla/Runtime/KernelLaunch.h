//===- KernelLaunch.h - Launch one compiled kernel with host data -*- C++
//-*-===//
//
// The launch of nabla-run, nabla-launch and Python, written once on top of
// the device layer (Device.h) for every driver: allocate device memory for
// the host arrays, copy them in, write relocated objects into module
// globals, launch (repeatedly, timed when asked), copy the results back and
// free everything, on every path.
//
// A launch may be repeated on the same device objects; every repeat starts
// from the same inputs (restored outside the timed interval), so the results
// are those of one launch and every repeat computes the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_KERNELLAUNCH_H
#define NABLA_RUNTIME_KERNELLAUNCH_H

#include "nabla/Runtime/Device.h"
#include "nabla/Runtime/Manifest.h"
#include "nabla/Runtime/Npy.h"
#include "nabla/Runtime/Timing.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nabla::runtime {

/// Memory a buffer parameter already has on the device (a CuPy array's
/// `__cuda_array_interface__`): the launch passes `pointer` as the memref's
/// pointer, without allocating or copying, and the kernel updates it in
/// place. Only the CUDA device takes it (Device::adoptExternalBuffer).
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
  /// An optional buffer the launch passes as null (`--arg=null`, Python
  /// None): the kernel's presence flag says so, and a placeholder is bound.
  bool null = false;
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
  /// The printf buffer of the kernel's module (SPIR-V), if it has one: the
  /// records the kernel writes are printed to stdout after the launch.
  const PrintfLayout *printf = nullptr;
  /// The module globals of the kernel's module (SPIR-V), if it has some:
  /// the loader allocates and fills their buffers, and every repeat starts
  /// from their initial contents again.
  const ModuleGlobals *globals = nullptr;
  /// Bytes of dynamic shared memory of the launch (CUDA/HIP: the launch
  /// parameter; Vulkan: compiled into the SPIR-V, checked before).
  uint32_t dynamicSharedMemory = 0;
  /// The most bytes the kernel's global-memory tape may take (0: the
  /// default, a quarter of the device's memory where the driver reports it,
  /// else 1 GiB: TapeSize.h); a launch needing more fails before it starts,
  /// naming the size.
  uint64_t maxTapeBytes = 0;
  /// Times the kernel runs, on one set of device objects. Before each repeat
  /// every buffer and writable patch object is written again from the host
  /// data, so each repeat sees the same inputs (a kernel that updates a
  /// buffer in place, or accumulates into it, does not see its own output)
  /// and the buffers read back are those of the last repeat, equal to a
  /// single launch's.
  unsigned repeat = 1;
  /// When set, the kernel time of every repeat is measured on the device's
  /// clock and the uploads and the read-back on the host's; a device that
  /// cannot time kernels fails the launch with a message saying so. Timed,
  /// the repeats follow one more launch from the same inputs, whose time is
  /// reported apart (`firstLaunchNs`): the driver's work on a kernel's
  /// first use. Its device printf output is printed like a repeat's.
  LaunchTiming *timing = nullptr;
};

/// Checks a launch's dynamic shared memory (`bytes`, -1 when not given)
/// against what `kernel` needs: a kernel using it needs a size, and one
/// compiled with a size (SPIR-V) that size. False with `error` otherwise.
bool checkDynamicSharedMemory(const KernelInfo &kernel, int64_t bytes,
                              std::string &error);

/// The parameters of a manifest's kernel as every device receives them.
std::vector<KernelParam> kernelABI(const KernelInfo &kernel);

/// Runs `spec` on `device` with `params` (updated in place). All device
/// objects are released on every path.
Error launchKernel(Device &device, const LaunchSpec &spec,
                   std::vector<HostParam> &params);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_KERNELLAUNCH_H
