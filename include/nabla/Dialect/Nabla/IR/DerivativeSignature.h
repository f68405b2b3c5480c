//===- DerivativeSignature.h - Operands/results of a derivative -*- C++ -*-===//
// C++ -*-===//
//
// The calling convention of `nabla.autodiff` and `nabla.fwddiff` in one place:
// which activities a type may take in each mode, and how a callee signature
// plus activities expands into the derivative's operand and result lists
// (primals, shadows, seeds, gradients, tangents). The op verifiers, the
// differentiation pass and frontends building these ops all use it.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_DERIVATIVESIGNATURE_H
#define NABLA_DIALECT_NABLA_IR_DERIVATIVESIGNATURE_H

#include "nabla/Dialect/Nabla/IR/NablaAttrs.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace nabla {

/// Reverse mode computes vector-Jacobian products, forward mode
/// Jacobian-vector products.
enum class DerivativeMode { Reverse, Forward };

/// True for `dup` and `dupnoneed`: the value is passed with a shadow.
bool hasShadow(Activity activity);

/// Short code of an activity list, one letter per activity: c const, d dup,
/// n dupnoneed, a active, x activenoneed (generated functions' names).
std::string activityCode(llvm::ArrayRef<Activity> activities);

/// True for `active` and `activenoneed`.
bool isActiveValue(Activity activity);

/// Floating-point scalars in the wide sense: floats, vectors of floats and
/// complex numbers with float elements. These may be `active`.
bool isDifferentiableScalarType(mlir::Type type);

/// Memory a shadow can mirror: ranked/unranked memrefs and LLVM pointers.
bool isMemoryType(mlir::Type type);

/// Returns why `activity` is never allowed on a callee argument (`isResult`
/// false) or result in `mode`, whatever its type, or std::nullopt.
std::optional<std::string>
diagnoseActivityForMode(DerivativeMode mode, Activity activity, bool isResult);

/// Returns why `activity` is not allowed on a callee argument of type `type`
/// in `mode`, or std::nullopt if it is allowed. Includes the checks of
/// diagnoseActivityForMode.
std::optional<std::string> diagnoseArgumentActivity(DerivativeMode mode,
                                                    Activity activity,
                                                    mlir::Type type);

/// Returns why `activity` is not allowed on a callee result of type `type` in
/// `mode`, or std::nullopt if it is allowed. Includes the checks of
/// diagnoseActivityForMode.
std::optional<std::string>
diagnoseResultActivity(DerivativeMode mode, Activity activity, mlir::Type type);

/// What one operand or result of a derivative op stands for.
enum class SlotRole {
  Primal,   ///< A callee argument (operand) or callee result (result).
  Shadow,   ///< Shadow/tangent operand paired with a `dup` argument.
  Seed,     ///< Cotangent operand for an active callee result (reverse).
  Gradient, ///< Gradient result of an `active` argument (reverse).
  Tangent,  ///< Tangent result of a `dup` callee result (forward).
};

/// One entry of the expanded operand or result list.
struct SignatureSlot {
  SlotRole role;
  /// Index of the callee argument (Primal/Shadow operands, Gradient results)
  /// or callee result (Seed operands, Primal/Tangent results) it belongs to.
  unsigned calleeIndex;
  mlir::Type type;

  /// Human-readable description, e.g. "shadow of argument #0".
  std::string describe(bool isOperand) const;
};

/// The operand and result lists a derivative op must have.
struct DerivativeSignature {
  llvm::SmallVector<SignatureSlot> operands;
  llvm::SmallVector<SignatureSlot> results;

  /// Expands `argTypes -> resultTypes` with the given activities. The activity
  /// lists must have one entry per argument/result; legality of each activity
  /// is checked separately with diagnoseArgumentActivity/ResultActivity.
  static DerivativeSignature expand(DerivativeMode mode,
                                    mlir::TypeRange argTypes,
                                    mlir::TypeRange resultTypes,
                                    llvm::ArrayRef<Activity> argActivities,
                                    llvm::ArrayRef<Activity> resultActivities);

  llvm::SmallVector<mlir::Type> getOperandTypes() const;
  llvm::SmallVector<mlir::Type> getResultTypes() const;
};

/// Converts an array of `#nabla.activity` attributes to enum values.
llvm::SmallVector<Activity> toActivities(mlir::ArrayAttr activities);

} // namespace nabla

#endif // NABLA_DIALECT_NABLA_IR_DERIVATIVESIGNATURE_H
