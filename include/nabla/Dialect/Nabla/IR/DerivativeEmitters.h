//===- DerivativeEmitters.h - What an op's derivative rule is given -*- C++
//-*-===//
//
// The emitters nabla-differentiate passes to the op interfaces of
// NablaInterfaces.td (ForwardModeOpInterface, ReverseModeOpInterface): the
// builder, the correspondence between the source function's values and the
// derivative's (primal values, tangents, adjoints, shadows of memory),
// activity, and the GPU-aware services a memory or region op needs
// (accumulating into a shadow element that other threads may also update,
// taking the adjoint of a stored element, emitting a nested block). Nabla's
// own scf, memref, gpu, func and reloc ops use exactly this API (see
// lib/Dialect/Nabla/Transforms/Implementations/); a frontend's dialect
// implements the same interfaces as external models, without touching Nabla
// (examples/differentiable-dialect/).
//
// Values named `src` are the source function's; the emitter maps them to the
// derivative being built.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_DERIVATIVEEMITTERS_H
#define NABLA_DIALECT_NABLA_IR_DERIVATIVEEMITTERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace nabla {

/// Services shared by both modes.
class DerivativeEmitter {
public:
  virtual ~DerivativeEmitter();

  /// Where the rule emits; its insertion point is after the primal of the
  /// ops before (forward code) or at the adjoint of the ops after (reverse
  /// code).
  virtual mlir::OpBuilder &builder() = 0;

  /// True if src `value` carries a derivative (depends on a differentiated
  /// input).
  virtual bool isVaried(mlir::Value value) const = 0;
  /// True if src memref or pointer `value` has a shadow (its memory holds
  /// differentiated data).
  virtual bool isShadowed(mlir::Value value) const = 0;

  /// The derivative's value for src `value` (its primal).
  virtual mlir::Value primal(mlir::Value value) = 0;
  mlir::SmallVector<mlir::Value> primals(mlir::ValueRange values);
  /// Records `primal` as src `value`'s (a rule that builds the primal op
  /// itself).
  virtual void setPrimal(mlir::Value value, mlir::Value primal) = 0;
  /// Clones src `op` as the primal at the insertion point, recording its
  /// results; null when the emitter skips it (a write a recomputation must
  /// not repeat, one no read observes).
  virtual mlir::Operation *clonePrimal(mlir::Operation *op) = 0;

  /// The shadow of src memref `value` at the insertion point, or null.
  virtual mlir::Value shadow(mlir::Value value) = 0;
  virtual void setShadow(mlir::Value value, mlir::Value shadow) = 0;

  /// Emits the derivative of every op of src `block` but its terminator,
  /// in the mode's order, at the insertion point.
  virtual mlir::LogicalResult emitBlock(mlir::Block &block) = 0;

  /// True if src `op` (or anything nested in it) reads, writes or computes
  /// differentiated data.
  virtual bool isActive(mlir::Operation *op) const = 0;

  /// The located error for `op`, which has no derivative in this mode on an
  /// active path.
  virtual mlir::LogicalResult unsupported(mlir::Operation *op) = 0;
  /// Checks a write of src `stored` by `op` into memory without a shadow:
  /// an error when `stored` is differentiated (its derivative would be
  /// lost), a remark when the memory was declared constant.
  virtual mlir::LogicalResult checkUnshadowedWrite(mlir::Operation *op,
                                                   mlir::Value stored) = 0;
};

/// Forward mode: an op's rule clones it as the primal and emits the tangents
/// of its results from its operands' (and the shadows of its memory).
class ForwardEmitter : public DerivativeEmitter {
public:
  /// The tangent of src `value`, or null (zero).
  virtual mlir::Value tangent(mlir::Value value) = 0;
  /// The tangent, a zero constant where there is none.
  virtual mlir::Value tangentOrZero(mlir::Value value, mlir::Location loc) = 0;
  virtual void setTangent(mlir::Value value, mlir::Value tangent) = 0;
};

/// Reverse mode: an op's rule has two halves. The forward sweep runs the
/// primal and keeps what the reverse needs (forwardSweep); the reverse sweep
/// visits ops in reverse order and turns the adjoints of an op's results
/// into contributions to its operands' adjoints and to shadows
/// (reverseSweep).
class ReverseEmitter : public DerivativeEmitter {
public:
  /// The adjoint accumulated so far for src `value` in the current scope,
  /// or null (zero).
  virtual mlir::Value adjoint(mlir::Value value) = 0;
  /// Adds `adjoint` to src `value`'s adjoint (null: nothing).
  virtual void addAdjoint(mlir::Value value, mlir::Value adjoint) = 0;

  /// Adds `value` to element `indices` of `shadow`, the shadow of the memory
  /// src `access` reads: a plain read-add-write where no other thread can
  /// reach the element, an atomic add where one can, the ordered sum in
  /// deterministic mode.
  virtual mlir::LogicalResult accumulate(mlir::Operation *access,
                                         mlir::Value shadow,
                                         mlir::ValueRange indices,
                                         mlir::Value value) = 0;
  /// The adjoint that src `store` (which wrote element `indices` of the
  /// memory whose shadow is `shadow`) takes: read and zeroed, by exactly
  /// one of the threads that may have written the element.
  virtual mlir::FailureOr<mlir::Value>
  takeStoredAdjoint(mlir::Operation *store, mlir::Value shadow,
                    mlir::ValueRange indices) = 0;
  /// Reads element `indices` of `shadow` (of src memref `memref`) as an
  /// adjoint without zeroing it (the reverse of an atomic add): in
  /// deterministic mode the reading thread's pending contributions join it.
  virtual mlir::Value readShadow(mlir::Location loc, mlir::Value memref,
                                 mlir::Value shadow,
                                 mlir::ValueRange indices) = 0;
  /// True in deterministic mode (nabla-differentiate's `deterministic`).
  virtual bool isDeterministic() const = 0;
};

} // namespace nabla

#endif // NABLA_DIALECT_NABLA_IR_DERIVATIVEEMITTERS_H
