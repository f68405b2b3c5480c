//===- Npy.h - Read and write NumPy .npy arrays -----------------*- C++ -*-===//
//
// Version 1.0/2.0 .npy files with little-endian float16/32/64, int8/16/32/64,
// uint8/16/32/64 or bool data in C order: the buffer format of nabla-run and
// nabla-launch.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_NPY_H
#define NABLA_RUNTIME_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace nabla::runtime {

/// A dense, C-ordered array.
struct NpyArray {
  /// The type code without byte order: "f2", "f4", "f8", "b1", "i1", "u1",
  /// "i2", "u2", "i4", "u4", "i8" or "u8".
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  /// Set when a launch views the array as bytes (a 1-D i8 buffer given an
  /// array of wider elements): its own dtype and shape, for the output.
  std::string viewedDtype;
  std::vector<int64_t> viewedShape;

  int64_t numElements() const;
  unsigned elementSize() const { return dtype.empty() ? 0 : dtype[1] - '0'; }
};

/// The .npy dtype code of an MLIR element type ("f32" → "f4"; signless
/// integers as signed; bf16, which numpy lacks, as its bits "u2"), or "".
std::string dtypeForElementType(const std::string &elementType);

/// True if a buffer of `dtype` can be bound to a memref of `elementType`:
/// the dtype of the type, or, for signless integers, the unsigned dtype of
/// that width (and bool for i8, C++'s bool in memory), and int16/uint16 bits
/// for f16 and bf16.
bool dtypeMatchesElementType(const std::string &dtype,
                             const std::string &elementType);

/// Reads `path`; on failure returns false and sets `error`.
bool readNpy(const std::string &path, NpyArray &array, std::string &error);

/// Parses the contents of a .npy file held in memory: readNpy after reading
/// the file, and the .npy fuzz target. `path` names the bytes in `error`.
bool parseNpy(const std::string &bytes, const std::string &path,
              NpyArray &array, std::string &error);

/// Writes `array` to `path`; on failure returns false and sets `error`.
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_NPY_H
