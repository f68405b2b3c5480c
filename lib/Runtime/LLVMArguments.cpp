//===- LLVMArguments.cpp - Kernel arguments in the LLVM memref ABI --------===//
//
// A memref parameter is passed as its descriptor: allocated and aligned
// pointer (the same device address), offset 0, the sizes from the array's
// shape and the row-major strides; scalars as their value.
//
//===----------------------------------------------------------------------===//

#include "LLVMArguments.h"

#include <cstring>

using namespace nabla::runtime;

bool nabla::runtime::packLLVMArguments(
    const KernelInfo &kernel, const std::vector<HostParam> &params,
    const std::vector<uint64_t> &devicePointers, PackedArguments &packed,
    std::string &error) {
  packed.values.assign(kernel.arguments.size(), {});
  packed.pointers.clear();
  for (size_t i = 0; i < kernel.arguments.size(); ++i) {
    const ArgumentInfo &arg = kernel.arguments[i];
    if (arg.param >= params.size()) {
      error = "manifest argument refers to a missing parameter";
      return false;
    }
    const HostParam &param = params[arg.param];
    std::array<uint8_t, 8> &slot = packed.values[i];
    auto put64 = [&](uint64_t v) { std::memcpy(slot.data(), &v, 8); };
    const std::vector<int64_t> &shape = param.buffer.shape;
    if (arg.field == "value") {
      std::memcpy(slot.data(), param.scalar, param.scalarBytes);
    } else if (arg.field == "allocated" || arg.field == "aligned") {
      put64(devicePointers[arg.param]);
    } else if (arg.field == "offset") {
      put64(0);
    } else if (arg.field == "size" || arg.field == "stride") {
      if (arg.dim < 0 || arg.dim >= static_cast<int>(shape.size())) {
        error = "manifest argument has a bad dimension";
        return false;
      }
      int64_t v = 1;
      if (arg.field == "size")
        v = shape[arg.dim];
      else
        for (size_t d = arg.dim + 1; d < shape.size(); ++d)
          v *= shape[d];
      put64(static_cast<uint64_t>(v));
    } else {
      error = "unknown manifest argument field '" + arg.field + "'";
      return false;
    }
    packed.pointers.push_back(slot.data());
  }
  return true;
}
