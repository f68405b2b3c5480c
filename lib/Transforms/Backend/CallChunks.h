//===- CallChunks.h - Long call sequences split into functions ------------===//
//
// A hook of nabla-module-to-binary on the optimized LLVM IR of a device
// module, before its back end runs: see CallChunks.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_TRANSFORMS_BACKEND_CALLCHUNKS_H
#define NABLA_LIB_TRANSFORMS_BACKEND_CALLCHUNKS_H

#include <cstdint>

namespace llvm {
class Instruction;
class Module;
} // namespace llvm

namespace nabla {

/// A call the back end emits as a call: not an intrinsic, not inline asm.
bool isBackEndCall(const llvm::Instruction &instruction);

/// Splits each function making more than twice `callsPerChunk` calls into
/// single-entry, single-exit groups of blocks making about `callsPerChunk`
/// calls each, every group but the first and the last a function of its own
/// (CallChunks.cpp). Returns how many functions were made. 0 does nothing.
int64_t splitLongCallSequences(llvm::Module &module, int64_t callsPerChunk);

} // namespace nabla

#endif // NABLA_LIB_TRANSFORMS_BACKEND_CALLCHUNKS_H
