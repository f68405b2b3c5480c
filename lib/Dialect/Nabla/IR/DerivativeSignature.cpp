//===- DerivativeSignature.cpp - Operands/results of a derivative ---------===//
//
// Activity legality per type and mode, and the expansion of a callee signature
// into a derivative's operand and result lists (DESIGN.md §2).
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace nabla;

bool nabla::hasShadow(Activity activity) {
  return activity == Activity::Dup || activity == Activity::DupNoNeed;
}

std::string nabla::activityCode(ArrayRef<Activity> activities) {
  std::string code;
  for (Activity a : activities) {
    switch (a) {
    case Activity::Const:
      code += 'c';
      break;
    case Activity::Dup:
      code += 'd';
      break;
    case Activity::DupNoNeed:
      code += 'n';
      break;
    case Activity::Active:
      code += 'a';
      break;
    case Activity::ActiveNoNeed:
      code += 'x';
      break;
    }
  }
  return code;
}

bool nabla::isActiveValue(Activity activity) {
  return activity == Activity::Active || activity == Activity::ActiveNoNeed;
}

bool nabla::isDifferentiableScalarType(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return isa<FloatType>(vector.getElementType());
  if (auto complex = dyn_cast<ComplexType>(type))
    return isa<FloatType>(complex.getElementType());
  return isa<FloatType>(type);
}

bool nabla::isMemoryType(Type type) {
  return isa<BaseMemRefType, LLVM::LLVMPointerType>(type);
}

/// Prints `type` into a string for a diagnostic.
static std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::optional<std::string> nabla::diagnoseActivityForMode(DerivativeMode mode,
                                                          Activity activity,
                                                          bool isResult) {
  std::string name = stringifyActivity(activity).str();
  if (mode == DerivativeMode::Forward) {
    if (isActiveValue(activity))
      return std::string("forward mode takes 'dup' for a differentiable ") +
             (isResult ? "result" : "scalar") + ", not '" + name + "'";
    return std::nullopt;
  }
  if (!isResult && activity == Activity::ActiveNoNeed)
    return "'activenoneed' applies to results only; use 'active' for an "
           "argument";
  if (isResult && hasShadow(activity))
    return "reverse mode takes 'const', 'active' or 'activenoneed' results, "
           "not '" +
           name + "'";
  return std::nullopt;
}

std::optional<std::string> nabla::diagnoseArgumentActivity(DerivativeMode mode,
                                                           Activity activity,
                                                           Type type) {
  if (auto reason = diagnoseActivityForMode(mode, activity, /*isResult=*/false))
    return reason;
  std::string name = stringifyActivity(activity).str();
  if (activity == Activity::Active) {
    if (isDifferentiableScalarType(type))
      return std::nullopt;
    return "'active' requires a floating-point scalar, vector or complex "
           "type, got " +
           typeToString(type) +
           (isMemoryType(type) ? " (use 'dup' for memory)" : "");
  }
  if (!hasShadow(activity) || isMemoryType(type))
    return std::nullopt;
  if (mode == DerivativeMode::Reverse) {
    if (isDifferentiableScalarType(type))
      return "'" + name +
             "' on a scalar has no memory to accumulate into in reverse "
             "mode; use 'active' for " +
             typeToString(type);
    return "'" + name + "' requires a memref or pointer, got " +
           typeToString(type);
  }
  if (isDifferentiableScalarType(type))
    return std::nullopt;
  return "'" + name +
         "' requires a memref, pointer or floating-point type, got " +
         typeToString(type);
}

std::optional<std::string> nabla::diagnoseResultActivity(DerivativeMode mode,
                                                         Activity activity,
                                                         Type type) {
  if (auto reason = diagnoseActivityForMode(mode, activity, /*isResult=*/true))
    return reason;
  if (activity == Activity::Const)
    return std::nullopt;
  std::string name = stringifyActivity(activity).str();
  if (mode == DerivativeMode::Reverse) {
    if (isDifferentiableScalarType(type))
      return std::nullopt;
    return "'" + name +
           "' requires a floating-point scalar, vector or complex type, got " +
           typeToString(type);
  }
  if (isDifferentiableScalarType(type) || isMemoryType(type))
    return std::nullopt;
  return "'" + name +
         "' requires a memref, pointer or floating-point type, got " +
         typeToString(type);
}

std::string SignatureSlot::describe(bool isOperand) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (role) {
  case SlotRole::Primal:
    os << "primal " << (isOperand ? "argument #" : "result #");
    break;
  case SlotRole::Shadow:
    os << "shadow of argument #";
    break;
  case SlotRole::Seed:
    os << "seed of result #";
    break;
  case SlotRole::Gradient:
    os << "gradient of argument #";
    break;
  case SlotRole::Tangent:
    os << "tangent of result #";
    break;
  }
  os << calleeIndex;
  return text;
}

DerivativeSignature DerivativeSignature::expand(
    DerivativeMode mode, TypeRange argTypes, TypeRange resultTypes,
    ArrayRef<Activity> argActivities, ArrayRef<Activity> resultActivities) {
  assert(argTypes.size() == argActivities.size() &&
         resultTypes.size() == resultActivities.size() &&
         "one activity per argument and result");
  DerivativeSignature signature;
  for (auto [index, type, activity] :
       llvm::enumerate(argTypes, argActivities)) {
    unsigned i = index;
    signature.operands.push_back({SlotRole::Primal, i, type});
    if (hasShadow(activity))
      signature.operands.push_back({SlotRole::Shadow, i, type});
  }

  if (mode == DerivativeMode::Reverse) {
    for (auto [index, type, activity] :
         llvm::enumerate(resultTypes, resultActivities)) {
      unsigned i = index;
      if (isActiveValue(activity))
        signature.operands.push_back({SlotRole::Seed, i, type});
      if (activity == Activity::Const || activity == Activity::Active)
        signature.results.push_back({SlotRole::Primal, i, type});
    }
    for (auto [index, type, activity] :
         llvm::enumerate(argTypes, argActivities)) {
      unsigned i = index;
      if (activity == Activity::Active)
        signature.results.push_back({SlotRole::Gradient, i, type});
    }
    return signature;
  }

  for (auto [index, type, activity] :
       llvm::enumerate(resultTypes, resultActivities)) {
    unsigned i = index;
    if (activity != Activity::DupNoNeed)
      signature.results.push_back({SlotRole::Primal, i, type});
    if (hasShadow(activity))
      signature.results.push_back({SlotRole::Tangent, i, type});
  }
  return signature;
}

/// Collects the types of `slots`.
static SmallVector<Type> slotTypes(ArrayRef<SignatureSlot> slots) {
  return llvm::map_to_vector(
      slots, [](const SignatureSlot &slot) { return slot.type; });
}

SmallVector<Type> DerivativeSignature::getOperandTypes() const {
  return slotTypes(operands);
}

SmallVector<Type> DerivativeSignature::getResultTypes() const {
  return slotTypes(results);
}
