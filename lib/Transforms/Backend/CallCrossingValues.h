//===- CallCrossingValues.h - Values kept across many calls, in memory ----===//
//
// A hook of nabla-module-to-binary on the optimized LLVM IR of a device
// module, before its back end runs: see CallCrossingValues.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_TRANSFORMS_BACKEND_CALLCROSSINGVALUES_H
#define NABLA_LIB_TRANSFORMS_BACKEND_CALLCROSSINGVALUES_H

#include <cstdint>

namespace llvm {
class Module;
} // namespace llvm

namespace nabla {

/// Keeps every value that lives across more than `threshold` calls in the
/// function's stack frame: a volatile store after its definition, a volatile
/// load before each use that a call separates from the previous one (or that
/// is in another block). Returns how many values moved. 0 does nothing.
int64_t keepCallCrossingValuesInMemory(llvm::Module &module, int64_t threshold);

} // namespace nabla

#endif // NABLA_LIB_TRANSFORMS_BACKEND_CALLCROSSINGVALUES_H
