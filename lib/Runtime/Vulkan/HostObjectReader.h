//===- HostObjectReader.h - Read Nabla host objects and SPIR-V --*- C++ -*-===//
//
// Reads what mgpuModuleLoad receives for Vulkan: a Nabla host object (see
// nabla/Runtime/HostObject.h) or bare SPIR-V, and the facts a launch needs
// from the SPIR-V itself: each entry point's workgroup size, fixed by
// LocalSize or given by specialization constants.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_VULKAN_HOSTOBJECTREADER_H
#define NABLA_LIB_RUNTIME_VULKAN_HOSTOBJECTREADER_H

#include "SPIRVReflection.h"

#include "nabla/Runtime/Device.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nabla::runtime {

/// A kernel's SPIR-V entry point.
using EntryPoint = SPIRVEntryPoint;

struct HostObject {
  /// Whether the object carried a launch description (a bare SPIR-V module
  /// does not).
  bool described = false;
  std::map<std::string, std::vector<KernelParam>> kernels;
  /// Kernels with a printf buffer binding, the formats of their records and
  /// the buffer's capacity in words (nabla-lower-printf-to-buffer).
  std::set<std::string> printing;
  std::vector<std::string> printfFormats;
  uint32_t printfCapacity = 0;
  /// Module globals kept in buffers the loader owns, and the kernels that
  /// bind them (nabla-bind-module-globals).
  ModuleGlobals globals;
  std::vector<uint32_t> words;
  std::map<std::string, EntryPoint> entryPoints;
};

/// Reads `size` bytes at `data`; false with `error` if they are neither a
/// host object nor SPIR-V, or malformed.
bool readHostObject(const void *data, size_t size, HostObject &object,
                    std::string &error);

/// The text the printf records in `words` (word 0 the count of words
/// reserved, then records of format index, length and 64-bit slots) print,
/// with a note when records were lost to the capacity or are malformed.
std::string formatPrintfRecords(const uint32_t *words, uint32_t capacity,
                                const std::vector<std::string> &formats);

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_VULKAN_HOSTOBJECTREADER_H
