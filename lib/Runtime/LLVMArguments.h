//===- LLVMArguments.h - Kernel arguments and patched globals ---*- C++ -*-===//
//
// Shared by the CUDA and HIP back ends: packs host parameters into the kernel
// argument list recorded in the manifest (memref descriptor fields, scalars),
// and writes the objects of `patch` relocation records into their module
// globals through the driver's primitives.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_LLVMARGUMENTS_H
#define NABLA_LIB_RUNTIME_LLVMARGUMENTS_H

#include "nabla/Runtime/Device.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nabla::runtime {

/// Storage for one launch's arguments; `pointers` is what cuLaunchKernel /
/// hipModuleLaunchKernel take as kernelParams.
struct PackedArguments {
  std::vector<std::array<uint8_t, 8>> values;
  std::vector<void *> pointers;
};

/// Packs `params` (with `devicePointers[k]` the device address of buffer
/// parameter k) following `kernel.arguments`.
bool packLLVMArguments(const KernelInfo &kernel,
                       const std::vector<HostParam> &params,
                       const std::vector<uint64_t> &devicePointers,
                       PackedArguments &packed, std::string &error);

/// The driver primitives patching needs; each returns false with `error`.
struct GlobalPatcher {
  /// Device address and byte size of the loaded module's global `symbol`.
  std::function<bool(const std::string &symbol, uint64_t &address,
                     size_t &bytes, std::string &error)>
      lookup;
  std::function<bool(size_t bytes, uint64_t &address, std::string &error)>
      allocate;
  std::function<bool(uint64_t to, const void *from, size_t bytes,
                     std::string &error)>
      copyToDevice;
  std::function<bool(void *to, uint64_t from, size_t bytes, std::string &error)>
      copyToHost;
};

/// Writes each patch object into its global: a memref record's bytes into
/// the global itself (the sizes must agree), a pointer record's bytes into a
/// new device allocation whose address goes into the slot. `locations[i]` is
/// where object i lives; allocations to free are appended to `allocations`
/// (also on failure).
bool writePatches(const GlobalPatcher &patcher,
                  const std::vector<PatchObject> &patches,
                  std::vector<uint64_t> &locations,
                  std::vector<uint64_t> &allocations, std::string &error);

/// Writes the writable patch objects again to `locations` (where
/// writePatches put them), so that a repeated launch starts from the same
/// objects.
bool restorePatches(const GlobalPatcher &patcher,
                    const std::vector<PatchObject> &patches,
                    const std::vector<uint64_t> &locations, std::string &error);

/// Copies the writable patch objects back from `locations`.
bool readPatches(const GlobalPatcher &patcher,
                 const std::vector<PatchObject> &patches,
                 const std::vector<uint64_t> &locations, std::string &error);

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_LLVMARGUMENTS_H
