//===- ActivityAnalysis.h - Activities and shared AD helpers ----*- C++ -*-===//
//
// The activity analysis of nabla-differentiate (which values carry
// derivatives, which buffers have shadows) and the helpers both derivative
// emitters share: diagnostics for what has no rule, the activities of calls,
// shadow allocations.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_ACTIVITYANALYSIS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_ACTIVITYANALYSIS_H

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

namespace nabla {

/// Floating-point scalars, vectors and complex numbers.
bool isFloatLike(mlir::Type type);

/// The buffer `memref` is a view of (through view-like ops), or `memref`.
mlir::Value getViewSource(mlir::Value memref);

/// True if nothing in the function owning `arg` (a buffer argument) writes
/// its memory: no op with a write effect on it or a view of it, no call or
/// op of unknown effects it is passed to.
bool isNeverWritten(mlir::BlockArgument arg);

/// The memref.alloca `memref` is (through views), or null.
mlir::memref::AllocaOp getAllocation(mlir::Value memref);

/// Creates, at `b`, a zero-filled allocation like `alloca` (dynamic sizes
/// `sizes`): the shadow of a private buffer.
mlir::Value createZeroedAllocation(mlir::OpBuilder &b,
                                   mlir::memref::AllocaOp alloca,
                                   mlir::ValueRange sizes);

/// Float values that depend on an active input, and memrefs with shadows.
struct Activities {
  llvm::DenseSet<mlir::Value> varied;
  llvm::DenseSet<mlir::Value> shadowed;

  bool isVaried(mlir::Value v) const { return varied.contains(v); }
  bool isShadowed(mlir::Value v) const { return shadowed.contains(v); }

  /// Propagates from the seeds to a fixpoint over `func`.
  void propagate(mlir::func::FuncOp func);
};

/// True for ops that only read a buffer's shape or layout (memref.dim...):
/// they need no derivative even on a buffer with a shadow.
bool readsOnlyMetadata(mlir::Operation *op);

/// True for the float min/max kinds of memref.atomic_rmw.
bool isFloatMinMaxAtomic(mlir::arith::AtomicRMWKind kind);

/// Checks that `mode` (forward or reverse) can find the thread whose float
/// min/max `atomic` stored its location's final value: workgroup memory, a
/// gpu.barrier after the atomic (in its own block with `sameBlock`, else in
/// it or an enclosing block), and no write to the buffer after the atomic
/// other than atomics of the same kind. A located error otherwise.
mlir::LogicalResult checkMinMaxAtomic(mlir::memref::AtomicRMWOp atomic,
                                      llvm::StringRef mode, bool sameBlock);

/// Whether this thread's min/max `atomic` (forward values: `memref`,
/// `indices`, its `value` and the `old` value it returned) stored the
/// location's final value, read now: it had v = final and saw a smaller (for
/// min: larger) old value. Exactly one atomic per location does, unless the
/// initial value was never beaten.
mlir::Value emitStoredFinalValue(mlir::OpBuilder &b,
                                 mlir::memref::AtomicRMWOp atomic,
                                 mlir::Value memref, mlir::ValueRange indices,
                                 mlir::Value value, mlir::Value old);

/// Emits at `b` the view `view` (a ViewLikeOpInterface op of the callee)
/// taken of `shadowSource` instead of its source: the shadow's view. Its other
/// operands are looked up in `mapping`.
mlir::Value cloneViewOfShadow(mlir::OpBuilder &b, mlir::Operation *view,
                              const mlir::IRMapping &mapping,
                              mlir::Value shadowSource);

/// Reports an op on an active path that has no derivative rule.
mlir::LogicalResult unsupported(mlir::Operation *op, llvm::StringRef mode);

/// True if `op` touches differentiated data: a varied operand or result, or
/// a memref operand with a shadow.
bool touchesActiveData(mlir::Operation *op, const Activities &act);
/// True if `op` or any op nested in it touches active data.
bool regionTouchesActive(mlir::Operation *op, const Activities &act);

/// Finds the custom rule a call on an active path needs.
using RuleFinder = std::function<mlir::func::FuncOp(
    llvm::StringRef, DerivativeMode, llvm::ArrayRef<Activity>,
    llvm::ArrayRef<Activity>)>;

/// The activities of `call`'s arguments and results in `mode`, from the
/// activity analysis: shadowed memrefs are dup; varied floats are active
/// (reverse) or dup (forward); everything else const.
std::pair<llvm::SmallVector<Activity>, llvm::SmallVector<Activity>>
callActivities(mlir::func::CallOp call, DerivativeMode mode,
               const Activities &act);

/// Reports a call on an active path without a matching custom rule.
mlir::LogicalResult missingRule(mlir::func::CallOp call, DerivativeMode mode,
                                llvm::ArrayRef<Activity> args,
                                llvm::ArrayRef<Activity> rets);

/// A write of a differentiated value into a buffer without a shadow (one the
/// request marks const) is inactive, Enzyme's rule for `enzyme_const`
/// memory: a remark says so, since the value's derivative stops there.
mlir::LogicalResult checkUnshadowedWrite(mlir::Operation *op, mlir::Value value,
                                         const Activities &act);

/// Drops the terminator an op builder may have put into a new region block,
/// so the emitters can fill the block and add their own.
void clearTerminator(mlir::Block &block);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_ACTIVITYANALYSIS_H
