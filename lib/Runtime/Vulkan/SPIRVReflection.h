//===- SPIRVReflection.h - Entry points and workgroup sizes -----*- C++ -*-===//
//
// What a Vulkan launch needs to know from a SPIR-V module before it builds a
// pipeline: its entry points and how each gets its workgroup size, fixed by
// a LocalSize execution mode or set at pipeline creation through the
// specialization constants of a WorkgroupSize built-in composite (the form
// nabla-to-spirv produces for kernels compiled without a known block size).
// A single pass over the instruction stream; no SPIRV-Tools needed.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_SPIRVREFLECTION_H
#define NABLA_LIB_RUNTIME_SPIRVREFLECTION_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace nabla::runtime {

struct SPIRVEntryPoint {
  /// The LocalSize execution mode, when the size is fixed.
  std::optional<std::array<uint32_t, 3>> localSize;
  /// The SpecIds of the x, y, z workgroup size, when a WorkgroupSize
  /// built-in composite of specialization constants sets it (it overrides
  /// LocalSize).
  std::optional<std::array<uint32_t, 3>> sizeSpecIds;
};

/// Reads the entry points of the SPIR-V module `words[0, count)`; false with
/// `error` if it is not SPIR-V or malformed.
bool reflectEntryPoints(const uint32_t *words, size_t count,
                        std::map<std::string, SPIRVEntryPoint> &entryPoints,
                        std::string &error);

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_SPIRVREFLECTION_H
