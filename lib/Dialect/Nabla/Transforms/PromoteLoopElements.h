//===- PromoteLoopElements.h - Elements updated in place --------*- C++ -*-===//
//
// Reverse mode's preparation of loops: an element a loop updates in place.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_PROMOTELOOPELEMENTS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_PROMOTELOOPELEMENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nabla {

/// In every scf.for of `function` (innermost first), an element that the
/// loop body loads and stores at one loop-invariant place, and that nothing
/// else in the loop touches, becomes a loop-carried value: loaded before the
/// loop, stored after it (both only if the loop runs). Reverse mode then
/// needs no memory state to recompute the loop's iterations.
void promoteLoopElements(mlir::func::FuncOp function);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_PROMOTELOOPELEMENTS_H
