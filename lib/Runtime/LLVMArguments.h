//===- LLVMArguments.h - Kernel arguments in the LLVM memref ABI -*- C++
//-*-===//
//
// Shared by the CUDA and HIP back ends: packs host parameters into the kernel
// argument list recorded in the manifest (memref descriptor fields, scalars).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_LLVMARGUMENTS_H
#define NABLA_LIB_RUNTIME_LLVMARGUMENTS_H

#include "nabla/Runtime/Device.h"

#include <array>
#include <cstdint>
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

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_LLVMARGUMENTS_H
