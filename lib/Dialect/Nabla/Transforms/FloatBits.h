//===- FloatBits.h - Floats moved as integer bits ---------------*- C++ -*-===//
//
// GPU code moves floats through integer operations: `__shfl_*` of
// `__float_as_int(v)`, cooperative groups' reductions of structs, the two
// 32-bit halves of a double, selects of reinterpreted values. The derivative
// of such a float must not be lost on the way. forwardFloatBits rewrites the
// integer moves back into float operations before the activity analysis;
// checkFloatBits makes every remaining path from a differentiated float's
// bits back to a float (or into memory) a located error.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_FLOATBITS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_FLOATBITS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nabla {
struct Activities;

/// Rewrites integer shuffles, selects and scf.if results of reinterpreted
/// floats into float ones (a 64-bit float shuffled as two 32-bit halves into
/// one 64-bit shuffle), and sign-bit masks of reinterpreted floats into
/// absf/negf, so the bits become a float again before differentiation.
void forwardFloatBits(mlir::func::FuncOp func);

/// Follows the integer bits of every differentiated float (arith.bitcast to
/// an integer, then integer ops, shuffles, selects, loop-carried values):
/// a located error where they become a float again or are written to
/// memory, because the derivative cannot follow them there. Bits that only
/// feed comparisons, indices or branches are piecewise constant and fine.
mlir::LogicalResult checkFloatBits(mlir::func::FuncOp func,
                                   const Activities &act);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_FLOATBITS_H
