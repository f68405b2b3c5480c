//===- NullTests.cpp - Null tests of pointer parameters -------------------===//
//
// A parameter a function tests for null (`if (bias != NULL)`) gets a
// presence flag (PlanModule.cpp plans it, RaiseFunction.cpp reads it): which
// compares are null tests, and whether a parameter flows, as itself or an
// Enzyme request's primal or shadow, to a parameter with a flag.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

using namespace mlir;
using namespace nabla::raise;

/// `value` without address-space casts and bitcasts.
Value nabla::raise::stripPointerCasts(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

Value nabla::raise::getNullTestedPointer(LLVM::ICmpOp compare) {
  if (compare.getPredicate() != LLVM::ICmpPredicate::eq &&
      compare.getPredicate() != LLVM::ICmpPredicate::ne)
    return nullptr;
  Value lhs = stripPointerCasts(compare.getLhs());
  Value rhs = stripPointerCasts(compare.getRhs());
  if (!isa<LLVM::LLVMPointerType>(lhs.getType()))
    return nullptr;
  if (lhs.getDefiningOp<LLVM::ZeroOp>())
    std::swap(lhs, rhs);
  if (!rhs.getDefiningOp<LLVM::ZeroOp>() || lhs.getDefiningOp<LLVM::ZeroOp>())
    return nullptr;
  return lhs;
}

/// The marker activity `value` loads (`enzyme_dup`, ...), if it is one.
std::optional<StringRef> nabla::raise::getLoadedMarker(Value value) {
  auto load = value.getDefiningOp<LLVM::LoadOp>();
  if (!load)
    return std::nullopt;
  auto address = stripPointerCasts(load.getAddr()).getDefiningOp<LLVM::AddressOfOp>();
  if (!address)
    return std::nullopt;
  return getMarkerActivity(address.getGlobalName());
}

/// The parameter of the function an Enzyme request differentiates that
/// operand `operand` (an index into the call's arguments after the function)
/// stands for, as the request's markers and defaults assign them: pointers
/// (and dup scalars) take a shadow after them.
static std::optional<unsigned> getEnzymeParam(LLVM::CallOp call,
                                              LLVM::LLVMFuncOp callee,
                                              bool reverse, unsigned operand) {
  // Split mode's prefix (the caller's tape) tags no parameter.
  unsigned prefix = getEnzymeSplitPrefix(call).size;
  if (operand < prefix)
    return std::nullopt;
  operand -= prefix;
  auto operands = call.getArgOperands().drop_front(1 + prefix);
  unsigned param = 0;
  std::optional<StringRef> activity;
  for (unsigned i = 0; i < operands.size(); ++i) {
    if (std::optional<StringRef> marker = getLoadedMarker(operands[i])) {
      activity = marker;
      continue;
    }
    if (param >= callee.getNumArguments())
      return std::nullopt;
    Type type = callee.getArgumentTypes()[param];
    bool hasShadow =
        activity ? (*activity == "dup" || *activity == "dupnoneed")
                 : (isa<LLVM::LLVMPointerType>(type) ||
                    (!reverse && isa<FloatType>(type)));
    if (i == operand || (hasShadow && i + 1 == operand))
      return param;
    i += hasShadow;
    activity.reset();
    ++param;
  }
  return std::nullopt;
}

/// True if `arg` (through casts) is passed, as itself or an Enzyme
/// request's primal or shadow, to a parameter with a presence flag of a
/// function already planned.
bool nabla::raise::flowsToPresence(ModulePlan &module, Value arg) {
  SmallVector<Value> worklist = {arg};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      auto call = dyn_cast<LLVM::CallOp>(user);
      if (!call || !call.getCallee())
        continue;
      unsigned operand = use.getOperandNumber() - call.getArgOperands()
                                                      .getBeginOperandIndex();
      std::optional<unsigned> param = operand;
      StringRef name = *call.getCallee();
      if (std::optional<bool> reverse = getEnzymeMode(name)) {
        if (call.getArgOperands().empty() || operand == 0)
          continue;
        auto function = stripPointerCasts(call.getArgOperands()[0])
                            .getDefiningOp<LLVM::AddressOfOp>();
        if (!function)
          continue;
        name = function.getGlobalName();
        FunctionPlan *callee =
            module.lookup(StringAttr::get(call.getContext(), name));
        if (!callee)
          continue;
        param = getEnzymeParam(call, callee->func, *reverse, operand - 1);
      }
      FunctionPlan *callee =
          module.lookup(StringAttr::get(call.getContext(), name));
      if (callee && param &&
          llvm::any_of(callee->params, [&](const Param &p) {
            return p.kind == Param::Presence && p.llvmArgument == *param;
          }))
        return true;
    }
  }
  return false;
}

/// True if the code compares `arg` (through casts) with null.
bool nabla::raise::isNullTested(Value arg) {
  SmallVector<Value> worklist = {arg};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto compare = dyn_cast<LLVM::ICmpOp>(user);
          compare && getNullTestedPointer(compare) == arg)
        return true;
      if (isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user))
        worklist.push_back(user->getResult(0));
    }
  }
  return false;
}
