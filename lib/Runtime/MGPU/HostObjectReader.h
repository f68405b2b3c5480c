//===- HostObjectReader.h - Read Nabla host objects and SPIR-V --*- C++ -*-===//
//
// Reads what mgpuModuleLoad receives for Vulkan: a Nabla host object (see
// nabla/Runtime/HostObject.h) or bare SPIR-V, and the facts a launch needs
// from the SPIR-V itself: each entry point's workgroup size, fixed by
// LocalSize or given by specialization constants.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_MGPU_HOSTOBJECTREADER_H
#define NABLA_LIB_RUNTIME_MGPU_HOSTOBJECTREADER_H

#include "../SPIRVReflection.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nabla::mgpu {

/// One kernel parameter as the launch passes it.
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
  /// Whether a dynamic memref of rank >= 2 that is passed flattened, with
  /// one size binding per dynamic extent.
  bool hasSizeBindings() const;
};

/// A kernel's SPIR-V entry point.
using EntryPoint = nabla::runtime::SPIRVEntryPoint;

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

/// Bytes of one element of MLIR type `type` in host memory (index: 8) and
/// in a SPIR-V binding (index: 4); 0 for an unknown type.
unsigned hostElementBytes(const std::string &type);
unsigned deviceElementBytes(const std::string &type);

} // namespace nabla::mgpu

#endif // NABLA_LIB_RUNTIME_MGPU_HOSTOBJECTREADER_H
