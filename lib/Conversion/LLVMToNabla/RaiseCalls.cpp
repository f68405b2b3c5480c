//===- RaiseCalls.cpp - Calls of one LLVM function being raised -----------===//
//
// A call becomes a func.call of the raised device function (pointers as
// their memref or offset, presence flags of optional buffers, the callee's
// workgroup slots appended), a math/arith op of a device library function,
// or an Enzyme request (EnzymeRequests.cpp); anything else is a located
// error that names the callee as its author wrote it.
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Demangle/Demangle.h"

using namespace mlir;
using namespace nabla::raise;

/// An external function as its author wrote it: CUDA's device functions come
/// from libdevice as `__nv_<name>` (CUDA's `__int_as_float` is
/// `__nv_int_as_float`), NVVM intrinsics are PTX instructions, C++ names are
/// mangled.
static std::string describeCallee(StringRef name) {
  if (name.consume_front("__nv_"))
    return "CUDA's device function '" + name.str() + "' (or '__" + name.str() +
           "'; libdevice's @__nv_" + name.str() + ")";
  if (name.starts_with("llvm.nvvm."))
    return "the NVVM intrinsic @" + name.str() +
           " (a PTX instruction Nabla does not map)";
  if (name.starts_with("__ocml_") || name.starts_with("__ockl_"))
    return "HIP's device library function @" + name.str();
  std::string demangled = llvm::demangle(name.str());
  if (demangled != name)
    return "the device function '" + demangled + "' (@" + name.str() +
           ", which has no body in this module)";
  return "the external function @" + name.str();
}

LogicalResult FunctionRaiser::raiseCall(LLVM::CallOp call) {
  Location loc = plainLoc(call.getLoc());
  StringRef name = *call.getCallee();
  if (std::optional<bool> reverse = getEnzymeMode(name)) {
    Value fn = call.getOperand(0);
    FunctionPlan *callee = module.lookup(plan.roots[plan.rootOf[fn]].global);
    return raiseEnzymeRequest(call, *callee, *reverse);
  }
  if (isEnzymeAugmentSize(name))
    return raiseEnzymeAugmentSize(call);
  if (FunctionPlan *callee =
          module.lookup(StringAttr::get(call.getContext(), name))) {
    if (callee->isKernel)
      return fail(call) << "cannot raise a call of the kernel @" << name;
    SmallVector<Value> operands;
    for (const Param &param : callee->params) {
      Value operand = call.getArgOperands()[param.llvmArgument];
      if (param.kind == Param::Presence) {
        operands.push_back(getPresenceFlag(loc, operand));
        continue;
      }
      if (param.kind == Param::Scalar) {
        Value value = lookup(call, operand);
        if (!value)
          return failure();
        operands.push_back(value);
        continue;
      }
      FailureOr<std::pair<Value, Value>> ptr = lookupPointer(call, operand);
      if (failed(ptr))
        return failure();
      if (param.kind == Param::Offset) {
        operands.push_back(ptr->second);
        continue;
      }
      auto memrefType = cast<MemRefType>(ptr->first.getType());
      if (memrefType.getMemorySpace())
        return fail(call) << "cannot pass workgroup or private memory to "
                             "the device function @"
                          << name << " as a pointer";
      operands.push_back(castToDynamic(loc, ptr->first));
    }
    for (const SharedSlot &slot : callee->shared)
      operands.push_back(
          slotValues[llvm::find(plan.shared, slot) - plan.shared.begin()]);
    auto raised = func::CallOp::create(
        builder, loc, name,
        call.getNumResults() ? TypeRange(call.getResultTypes()) : TypeRange(),
        operands);
    for (auto [from, to] : llvm::zip(call.getResults(), raised.getResults()))
      scalars.map(from, to);
    return success();
  }
  SmallVector<Value> operands;
  for (Value operand : call.getArgOperands()) {
    Value value = lookup(call, operand);
    if (!value)
      return failure();
    operands.push_back(value);
  }
  if (call.getNumResults() == 1)
    if (Value value = buildDeviceLibraryCall(builder, loc, name, operands)) {
      scalars.map(call.getResult(), value);
      return success();
    }
  return fail(call) << "cannot raise a call of " << describeCallee(name)
                    << " (not a function of this module, a device library "
                       "function Nabla knows, or an Enzyme request)";
}
