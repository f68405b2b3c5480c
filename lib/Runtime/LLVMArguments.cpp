//===- LLVMArguments.cpp - Kernel arguments in the LLVM memref ABI --------===//
//
// A memref parameter is passed as its descriptor: allocated and aligned
// pointer (the same device address), offset 0, the sizes from the array's
// shape and the row-major strides; scalars as their value.
//
//===----------------------------------------------------------------------===//

#include "LLVMArguments.h"

#include <algorithm>
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

bool nabla::runtime::writePatches(const GlobalPatcher &patcher,
                                  const std::vector<PatchObject> &patches,
                                  std::vector<uint64_t> &locations,
                                  std::vector<uint64_t> &allocations,
                                  std::string &error) {
  locations.assign(patches.size(), 0);
  for (size_t i = 0; i < patches.size(); ++i) {
    const PatchObject &patch = patches[i];
    const std::vector<uint8_t> &bytes = patch.object->data;
    uint64_t global = 0;
    size_t globalBytes = 0;
    if (!patcher.lookup(patch.symbol, global, globalBytes, error)) {
      error = "relocation record '" + patch.key + "': " + error;
      return false;
    }
    if (!patch.pointer) {
      if (globalBytes != bytes.size()) {
        error = "relocation record '" + patch.key + "': the module's @" +
                patch.symbol + " holds " + std::to_string(globalBytes) +
                " bytes, the object has " + std::to_string(bytes.size());
        return false;
      }
      if (!patcher.copyToDevice(global, bytes.data(), bytes.size(), error))
        return false;
      locations[i] = global;
      continue;
    }
    if (globalBytes != sizeof(uint64_t)) {
      error = "relocation record '" + patch.key + "': the slot @" +
              patch.symbol + " is not a 64-bit pointer";
      return false;
    }
    uint64_t copy = 0;
    if (!patcher.allocate(std::max<size_t>(bytes.size(), 16), copy, error))
      return false;
    allocations.push_back(copy);
    if (!bytes.empty() &&
        !patcher.copyToDevice(copy, bytes.data(), bytes.size(), error))
      return false;
    if (!patcher.copyToDevice(global, &copy, sizeof(copy), error))
      return false;
    locations[i] = copy;
  }
  return true;
}

bool nabla::runtime::restorePatches(const GlobalPatcher &patcher,
                                    const std::vector<PatchObject> &patches,
                                    const std::vector<uint64_t> &locations,
                                    std::string &error) {
  for (size_t i = 0; i < patches.size(); ++i) {
    const std::vector<uint8_t> &bytes = patches[i].object->data;
    if (patches[i].constant || bytes.empty())
      continue;
    if (!patcher.copyToDevice(locations[i], bytes.data(), bytes.size(), error))
      return false;
  }
  return true;
}

bool nabla::runtime::readPatches(const GlobalPatcher &patcher,
                                 const std::vector<PatchObject> &patches,
                                 const std::vector<uint64_t> &locations,
                                 std::string &error) {
  for (size_t i = 0; i < patches.size(); ++i) {
    std::vector<uint8_t> &bytes = patches[i].object->data;
    if (patches[i].constant || bytes.empty())
      continue;
    if (!patcher.copyToHost(bytes.data(), locations[i], bytes.size(), error))
      return false;
  }
  return true;
}
