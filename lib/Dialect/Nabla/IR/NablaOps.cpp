//===- NablaOps.cpp - Operations of the nabla dialect ---------------------===//
//
// Verification of `nabla.autodiff` and `nabla.fwddiff`. The op-local verifier
// checks activities that are wrong in the op's mode whatever the callee; the
// symbol-use verifier resolves the callee and checks counts, per-type activity
// legality and every operand and result type against the expanded signature.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace nabla;

SmallVector<Activity> nabla::toActivities(ArrayAttr activities) {
  return llvm::map_to_vector(activities, [](Attribute attr) {
    return cast<ActivityAttr>(attr).getValue();
  });
}

/// Checks activities that are illegal in `mode` regardless of types.
template <typename OpTy> static LogicalResult verifyActivitiesForMode(OpTy op) {
  DerivativeMode mode = OpTy::getMode();
  for (auto [index, activity] : llvm::enumerate(op.getArgumentActivities()))
    if (auto reason =
            diagnoseActivityForMode(mode, activity, /*isResult=*/false))
      return op.emitOpError("activity of argument #")
             << index << ": " << *reason;
  for (auto [index, activity] : llvm::enumerate(op.getResultActivities()))
    if (auto reason =
            diagnoseActivityForMode(mode, activity, /*isResult=*/true))
      return op.emitOpError("ret_activity of result #")
             << index << ": " << *reason;
  return success();
}

/// Compares `actual` against the expected `slots`; `what` is "operand" or
/// "result".
template <typename OpTy>
static LogicalResult verifySlots(OpTy op, StringRef what, TypeRange actual,
                                 ArrayRef<SignatureSlot> slots) {
  bool isOperand = what == "operand";
  if (actual.size() != slots.size()) {
    InFlightDiagnostic diag = op.emitOpError("expects ")
                              << slots.size() << " " << what << "s (";
    llvm::interleaveComma(slots, diag, [&](const SignatureSlot &slot) {
      diag << slot.describe(isOperand);
    });
    return diag << ") for callee " << op.getCalleeAttr() << ", got "
                << actual.size();
  }
  for (auto [index, type, slot] : llvm::enumerate(actual, slots))
    if (type != slot.type)
      return op.emitOpError()
             << what << " #" << index << " (" << slot.describe(isOperand)
             << ") has type " << type << ", but the callee expects "
             << slot.type;
  return success();
}

/// Resolves the callee and checks the op against its signature.
template <typename OpTy>
static LogicalResult verifyAgainstCallee(OpTy op,
                                         SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(op, op.getCalleeAttr());
  if (!symbol)
    return op.emitOpError("callee ")
           << op.getCalleeAttr()
           << " does not reference a symbol in the nearest symbol table";
  auto callee = dyn_cast<FunctionOpInterface>(symbol);
  if (!callee)
    return op.emitOpError("callee ")
           << op.getCalleeAttr() << " is not function-like (it is a '"
           << symbol->getName() << "')";

  ArrayRef<Type> argTypes = callee.getArgumentTypes();
  ArrayRef<Type> resultTypes = callee.getResultTypes();
  if (op.getActivity().size() != argTypes.size())
    return op.emitOpError("expects ")
           << argTypes.size() << " activities (one per argument of "
           << op.getCalleeAttr() << "), got " << op.getActivity().size();
  if (op.getRetActivity().size() != resultTypes.size())
    return op.emitOpError("expects ")
           << resultTypes.size() << " ret_activities (one per result of "
           << op.getCalleeAttr() << "), got " << op.getRetActivity().size();

  DerivativeMode mode = OpTy::getMode();
  SmallVector<Activity> argActivities = op.getArgumentActivities();
  SmallVector<Activity> resultActivities = op.getResultActivities();
  for (auto [index, type, activity] : llvm::enumerate(argTypes, argActivities))
    if (auto reason = diagnoseArgumentActivity(mode, activity, type))
      return op.emitOpError("activity of argument #")
             << index << ": " << *reason;
  for (auto [index, type, activity] :
       llvm::enumerate(resultTypes, resultActivities))
    if (auto reason = diagnoseResultActivity(mode, activity, type))
      return op.emitOpError("ret_activity of result #")
             << index << ": " << *reason;

  DerivativeSignature signature = DerivativeSignature::expand(
      mode, argTypes, resultTypes, argActivities, resultActivities);
  if (failed(verifySlots(op, "operand", op.getInputs().getTypes(),
                         signature.operands)))
    return failure();
  return verifySlots(op, "result", op.getOutputs().getTypes(),
                     signature.results);
}

Value TapeOp::emitWord(OpBuilder &builder, Location loc, ValueRange indices) {
  if (indices.size() == 1)
    return indices[0];
  Value two = arith::ConstantIndexOp::create(builder, loc, 2);
  return arith::AddIOp::create(
      builder, loc, arith::MulIOp::create(builder, loc, indices[0], two),
      indices[1]);
}

//===----------------------------------------------------------------------===//
// SplitAutodiffOp, SplitTapeBytesOp
//===----------------------------------------------------------------------===//

LogicalResult SplitAutodiffOp::verify() {
  if (getHalf() != "augmented" && getHalf() != "reverse")
    return emitOpError("half must be \"augmented\" or \"reverse\", got \"")
           << getHalf() << "\"";
  auto tape = cast<MemRefType>(getTape().getType());
  Type element = tape.getElementType();
  if (tape.getRank() != 1 ||
      !(element.isInteger(8) || element.isInteger(32) || element.isF32()))
    return emitOpError("tape must be a rank-1 memref of i8, i32 or f32, got ")
           << tape;
  return verifyActivitiesForMode(*this);
}

LogicalResult
SplitAutodiffOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyAgainstCallee(*this, symbolTable);
}

LogicalResult
SplitTapeBytesOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee = dyn_cast_or_null<FunctionOpInterface>(
      symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr()));
  if (!callee)
    return emitOpError("callee ") << getCalleeAttr() << " does not resolve";
  if (getActivity().size() != callee.getNumArguments() ||
      getRetActivity().size() != callee.getNumResults())
    return emitOpError("expects one activity per argument and result of ")
           << getCalleeAttr();
  return success();
}

//===----------------------------------------------------------------------===//
// CustomDerivativeOp
//===----------------------------------------------------------------------===//

LogicalResult CustomDerivativeOp::verify() {
  DerivativeMode mode = getDerivativeMode();
  for (auto [index, activity] : llvm::enumerate(getArgumentActivities()))
    if (auto reason =
            diagnoseActivityForMode(mode, activity, /*isResult=*/false))
      return emitOpError("activity of argument #") << index << ": " << *reason;
  for (auto [index, activity] : llvm::enumerate(getResultActivities()))
    if (auto reason =
            diagnoseActivityForMode(mode, activity, /*isResult=*/true))
      return emitOpError("ret_activity of result #")
             << index << ": " << *reason;
  return success();
}

LogicalResult
CustomDerivativeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto lookup = [&](FlatSymbolRefAttr name,
                    StringRef role) -> FailureOr<FunctionOpInterface> {
    Operation *symbol = symbolTable.lookupNearestSymbolFrom(*this, name);
    auto function = dyn_cast_or_null<FunctionOpInterface>(symbol);
    if (!function)
      return emitOpError() << role << " " << name
                           << " does not reference a function-like symbol";
    return function;
  };
  FailureOr<FunctionOpInterface> callee = lookup(getCalleeAttr(), "callee");
  if (failed(callee))
    return failure();
  FailureOr<FunctionOpInterface> rule = lookup(getRuleAttr(), "rule");
  if (failed(rule))
    return failure();
  ArrayRef<Type> argTypes = callee->getArgumentTypes();
  ArrayRef<Type> resultTypes = callee->getResultTypes();
  if (getActivity().size() != argTypes.size() ||
      getRetActivity().size() != resultTypes.size())
    return emitOpError("expects one activity per argument and result of ")
           << getCalleeAttr();
  DerivativeMode mode = getDerivativeMode();
  SmallVector<Activity> args = getArgumentActivities();
  SmallVector<Activity> rets = getResultActivities();
  for (auto [index, type, activity] : llvm::enumerate(argTypes, args))
    if (auto reason = diagnoseArgumentActivity(mode, activity, type))
      return emitOpError("activity of argument #") << index << ": " << *reason;
  for (auto [index, type, activity] : llvm::enumerate(resultTypes, rets))
    if (auto reason = diagnoseResultActivity(mode, activity, type))
      return emitOpError("ret_activity of result #")
             << index << ": " << *reason;
  DerivativeSignature signature =
      DerivativeSignature::expand(mode, argTypes, resultTypes, args, rets);
  auto expected = FunctionType::get(getContext(), signature.getOperandTypes(),
                                    signature.getResultTypes());
  auto actual = FunctionType::get(getContext(), rule->getArgumentTypes(),
                                  rule->getResultTypes());
  if (actual != expected)
    return emitOpError("rule ")
           << getRuleAttr() << " has type " << actual << ", but a "
           << stringifyDerivativeModeKind(getMode()) << " derivative of "
           << getCalleeAttr() << " with these activities has type " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// KernelAdjointOp
//===----------------------------------------------------------------------===//

namespace {

/// The checks both whole-kernel requests share: `kernelAttr` names a kernel,
/// `derivedAttr` is a new symbol, one activity per parameter, each allowed
/// for its type in `mode` (reverse mode: no scalar gradients, a kernel
/// returns nothing).
LogicalResult verifyKernelRequest(Operation *op,
                                  SymbolTableCollection &symbolTable,
                                  FlatSymbolRefAttr kernelAttr,
                                  FlatSymbolRefAttr derivedAttr,
                                  StringRef derivedRole,
                                  ArrayRef<Activity> activities,
                                  DerivativeMode mode) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(op, kernelAttr);
  auto kernel = dyn_cast_or_null<FunctionOpInterface>(symbol);
  // gpu.func kernels carry the `gpu.kernel` unit attribute.
  if (!kernel || symbol->getName().getStringRef() != "gpu.func" ||
      !symbol->hasAttr("gpu.kernel"))
    return op->emitOpError() << kernelAttr
                             << " does not reference a gpu.func kernel";
  if (symbolTable.lookupNearestSymbolFrom(op, derivedAttr))
    return op->emitOpError(derivedRole)
           << " " << derivedAttr << " names a symbol that already exists";
  ArrayRef<Type> argTypes = kernel.getArgumentTypes();
  if (activities.size() != argTypes.size())
    return op->emitOpError("expects one activity per parameter of ")
           << kernelAttr << " (" << argTypes.size() << "), got "
           << activities.size();
  for (auto [index, type, activity] : llvm::enumerate(argTypes, activities)) {
    bool isScalar = !isa<BaseMemRefType, LLVM::LLVMPointerType>(type);
    if (activity == Activity::Active || activity == Activity::ActiveNoNeed ||
        (mode == DerivativeMode::Reverse && isScalar &&
         activity != Activity::Const))
      return op->emitOpError("activity of parameter #")
             << index
             << ": a kernel returns nothing, so a scalar parameter has "
                "nowhere to put its gradient (pass it in a buffer marked dup)";
    if (auto reason = diagnoseArgumentActivity(mode, activity, type))
      return op->emitOpError("activity of parameter #") << index << ": "
                                                        << *reason;
  }
  return success();
}

} // namespace

LogicalResult
KernelAdjointOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyKernelRequest(*this, symbolTable, getKernelAttr(),
                                 getAdjointAttr(), "adjoint",
                                 getArgumentActivities(),
                                 DerivativeMode::Reverse)))
    return failure();
  if (FlatSymbolRefAttr reverse = getReverseAttr()) {
    if (symbolTable.lookupNearestSymbolFrom(*this, reverse))
      return emitOpError("reverse ")
             << reverse << " names a symbol that already exists";
    if (reverse == getAdjointAttr())
      return emitOpError("reverse ") << reverse << " is also the adjoint";
    if (getDeterministic())
      return emitOpError("the split form has no deterministic variant");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// KernelTangentOp
//===----------------------------------------------------------------------===//

LogicalResult
KernelTangentOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyKernelRequest(*this, symbolTable, getKernelAttr(),
                             getTangentAttr(), "tangent",
                             getArgumentActivities(), DerivativeMode::Forward);
}

//===----------------------------------------------------------------------===//
// MemoryFenceOp
//===----------------------------------------------------------------------===//

LogicalResult MemoryFenceOp::verify() {
  StringRef scope = getScope();
  if (scope != "workgroup" && scope != "device" && scope != "system")
    return emitOpError("scope must be workgroup, device or system, got '")
           << scope << "'";
  return success();
}

LogicalResult TapeOp::verify() {
  auto type = cast<MemRefType>(getSlots().getType());
  bool words = type.getRank() == 1;
  bool pairs = type.getRank() == 2 && type.getDimSize(1) == 2;
  if (!(words || pairs) || !type.isDynamicDim(0) ||
      !type.getLayout().isIdentity() || type.getMemorySpace())
    return emitOpError("result must be memref<?xi32> or memref<?x2xi32>, got ")
           << type;
  return success();
}

#define GET_OP_CLASSES
#include "nabla/Dialect/Nabla/IR/NablaOps.cpp.inc"
