//===- GenericAtomics.h - Atomics as compare-exchange loops ------*- C++ -*-===//
//
// An atomic read-modify-write a target has no instruction for (an integer
// multiply, a bf16 add on SPIR-V, one on 8- or 16-bit elements) becomes a
// `memref.generic_atomic_rmw` whose body combines the current value with the
// operand as the atomic's kind does; each target lowers that to a
// compare-exchange loop (ExpandAtomics.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TRANSFORMS_GENERICATOMICS_H
#define NABLA_TRANSFORMS_GENERICATOMICS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace nabla {

/// Replaces `atomic` by the generic atomic that computes its update (an
/// exchange stores the operand as it is); returns it.
mlir::memref::GenericAtomicRMWOp
expandToGenericAtomic(mlir::memref::AtomicRMWOp atomic);

} // namespace nabla

#endif // NABLA_TRANSFORMS_GENERICATOMICS_H
