//===- DerivativeRules.h - Local derivatives of ops -------------*- C++ -*-===//
//
// One rule per differentiable op, written once as the op's partial
// derivatives: forward mode multiplies them by the operand tangents, reverse
// mode by the result adjoint. Casts between float types are the only ops
// whose derivative changes type and are handled separately.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_DERIVATIVERULES_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_DERIVATIVERULES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace nabla {

/// True if `op` has a derivative rule: a float cast, or an implementation of
/// DifferentiableOpInterface (Nabla's built-in models or a frontend's).
bool hasDerivativeRule(mlir::Operation *op);

/// True for ops whose result is piecewise constant (floor, ceil, round...):
/// their derivative is zero.
bool hasZeroDerivative(mlir::Operation *op);

/// Emits at `builder`, through DifferentiableOpInterface, the partial
/// derivative of `op`'s single result with respect to each operand (null for
/// operands that are not differentiable, such as a select's condition). `op`
/// is the primal op whose operands and result are available at the insertion
/// point.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitPartials(mlir::OpBuilder &builder, mlir::Operation *op);

/// `derivative * partial`, where a partial that selects between 1 and 0 (a
/// select's, max's or min's) routes the derivative with a select instead: a
/// non-finite derivative of the branch not taken is dropped, never turned
/// into NaN by 0 * inf (Enzyme's select rule routes the same way).
mlir::Value scaleByPartial(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Value derivative, mlir::Value partial);

/// For float casts (extf, truncf): converts a derivative of the operand type
/// to the result type (forward) or back (reverse, `toOperand`).
mlir::Value castDerivative(mlir::OpBuilder &builder, mlir::Operation *cast,
                           mlir::Value derivative, bool toOperand);

/// A zero of `type` (float, vector or complex of float, integer, index).
mlir::Value createZero(mlir::OpBuilder &builder, mlir::Location loc,
                       mlir::Type type);

/// `a + b`, treating a null value as zero.
mlir::Value addDerivatives(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Value a, mlir::Value b);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_DERIVATIVERULES_H
