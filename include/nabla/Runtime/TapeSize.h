//===- TapeSize.h - The bytes of a launch's global-memory tape ---*- C++ -*-===//
//
// A kernel whose reverse mode tapes loops with trip counts known at run time
// declares its tape in the manifest (TapeInfo): words per thread as a
// formula of its integer scalar arguments, elements of its read-only integer
// buffers and the launch. Every launcher
// sizes the tape with tapeBytes before launching.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_TAPESIZE_H
#define NABLA_RUNTIME_TAPESIZE_H

#include "nabla/Runtime/Device.h"
#include "nabla/Runtime/Manifest.h"

#include <cstdint>
#include <functional>
#include <string>

namespace nabla::runtime {

/// The default cap on one launch's tape where the device's memory is not
/// known: 1 GiB.
inline constexpr uint64_t kDefaultMaxTapeBytes = uint64_t(1) << 30;

/// The default cap on one launch's tape on a device with `memoryBytes` of
/// memory (0: unknown): a quarter of it, else kDefaultMaxTapeBytes.
inline uint64_t defaultMaxTapeBytes(uint64_t memoryBytes) {
  return memoryBytes ? memoryBytes / 4 : kDefaultMaxTapeBytes;
}

/// The value of the kernel's integer scalar parameter `index` (sign-extended
/// to 64 bits), or false when it has none.
using ScalarArgument = std::function<bool(unsigned index, int64_t &value)>;

/// Element `index` of the kernel's integer buffer parameter `param`
/// (sign-extended to 64 bits; 0 past the buffer's end, as the kernel's
/// guarded read gives) and the buffer's element count; false when the
/// parameter is not an integer buffer of the launch. A tape whose loops run
/// as many times as memory says (ragged rows: `offsets[row + 1] -
/// offsets[row]`) reads the launch's inputs this way.
using BufferElement = std::function<bool(unsigned param, int64_t index,
                                         int64_t &value, int64_t &count)>;

/// The words per thread of `tape` for a launch of `grid` x `block` with the
/// given arguments: the largest over the grid's threads when the formula
/// reads thread or block ids. False with `error` when the formula reads
/// something the launch lacks or divides by zero.
/// `capacity`: the value of the formula's `capacity` (a growing tape's
/// slots per loop execution).
bool tapeWordsPerThread(const TapeInfo &tape, const ScalarArgument &argument,
                        const BufferElement &element, Dim3 grid, Dim3 block,
                        uint64_t &words, std::string &error,
                        uint64_t capacity = 0);

/// 4 * words per thread * threads (plus two words, the capacity and the
/// overflow, for a growing tape of `capacity`), checked against `maxBytes`
/// (0: the default cap): false with an error naming the size it needed.
bool tapeBytes(const KernelInfo &kernel, const ScalarArgument &argument,
               const BufferElement &element, Dim3 grid, Dim3 block,
               uint64_t maxBytes, uint64_t &bytes, std::string &error,
               uint64_t capacity = 0);

/// The capacity a growing tape starts with at a launch (slots per loop
/// execution): $NABLA_TAPE_CAPACITY, else 32. A launch that needed more
/// runs again with what it needed.
uint64_t initialTapeCapacity();

/// Checks that the caller's tape of a split-mode kernel (`elements` i32)
/// holds what a launch of `grid` x `block` needs; false with an error naming
/// the size otherwise.
bool checkSplitTape(const KernelInfo &kernel, const ScalarArgument &argument,
                    const BufferElement &element, Dim3 grid, Dim3 block,
                    uint64_t elements, std::string &error);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_TAPESIZE_H
