//===- HostDerivative.cpp - Derivatives of host functions -----------------===//
//
// `nabla.autodiff` / `nabla.fwddiff` of a host function that allocates,
// copies and launches kernels. The derivative is an ordinary host function:
//
//  Reverse mode (Enzyme's memory semantics over device buffers):
//   1. the forward sweep runs the program (every asynchronous op made
//      synchronous: program order is a valid order of the async program),
//      allocating a zeroed shadow next to every intermediate float buffer and
//      deferring its frees; before an op overwrites a buffer that a launch at
//      or before it (or in a loop around both) reads, it copies the buffer
//      into a snapshot slot (one per iteration of the enclosing loops);
//   2. the reverse sweep walks the program backwards (loops reversed, ifs
//      replayed): a launch becomes a launch of its kernel's adjoint (a
//      `nabla.kernel_adjoint` of the kernel with the activities the host's
//      buffers give it, which recomputes the kernel from its inputs), a copy
//      adds its destination's shadow into its source's and zeroes it, a
//      memset zeroes its shadow; each overwrite is undone from its snapshot
//      (before the adjoint when that kernel reads the buffer, and after it),
//      so every adjoint kernel sees the buffers as its launch did;
//   3. arguments that were restored get their final contents back, and every
//      snapshot, shadow and deferred buffer is freed.
//  Forward mode runs the program with each launch replaced by its kernel's
//  tangent kernel (`nabla.kernel_tangent`), copies and memsets mirrored on
//  the tangents.
//
//===----------------------------------------------------------------------===//

#include "HostDerivative.h"
#include "HostProgram.h"

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Transforms/InliningUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace nabla;
using namespace nabla::host;

namespace {

/// Inlines every call of a function with a body in `function`; calls of
/// declarations (the runner's print functions) stay.
LogicalResult inlineHostCalls(func::FuncOp function) {
  return inlineFuncCalls(function, [](func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    return FailureOr<func::FuncOp>(
        callee && !callee.isExternal() ? callee : func::FuncOp());
  });
}

/// The request's callee if it is a host program, else null.
func::FuncOp getHostCallee(Operation *request) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      request, request->getAttrOfType<FlatSymbolRefAttr>("callee"));
  return callee && isHostProgram(callee) ? callee : func::FuncOp();
}

} // namespace

bool nabla::isHostProgram(func::FuncOp function) {
  if (function.isExternal() || function->getParentOfType<gpu::GPUModuleOp>())
    return false;
  SmallVector<func::FuncOp> worklist{function};
  DenseSet<Operation *> visited;
  while (!worklist.empty()) {
    func::FuncOp next = worklist.pop_back_val();
    if (!next || next.isExternal() || !visited.insert(next).second)
      continue;
    bool launches = false;
    next.walk([&](Operation *op) {
      if (isa<gpu::LaunchFuncOp, gpu::LaunchOp>(op))
        launches = true;
      else if (auto call = dyn_cast<func::CallOp>(op))
        worklist.push_back(SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr()));
    });
    if (launches)
      return true;
  }
  return false;
}

bool nabla::hostRequestsNeedOutlining(ModuleOp module) {
  bool hasRequest = module
                        ->walk([](Operation *op) {
                          return isa<AutodiffOp, FwddiffOp>(op) &&
                                         getHostCallee(op)
                                     ? WalkResult::interrupt()
                                     : WalkResult::advance();
                        })
                        .wasInterrupted();
  return hasRequest &&
         module.walk([](gpu::LaunchOp) { return WalkResult::interrupt(); })
             .wasInterrupted();
}

LogicalResult nabla::expandHostRequests(ModuleOp module, bool remarks) {
  SmallVector<Operation *> requests;
  module.walk([&](Operation *op) {
    if (isa<AutodiffOp, FwddiffOp>(op) && getHostCallee(op))
      requests.push_back(op);
  });
  for (Operation *request : requests) {
    func::FuncOp callee = getHostCallee(request);
    bool reverse = isa<AutodiffOp>(request);
    DerivativeMode mode =
        reverse ? DerivativeMode::Reverse : DerivativeMode::Forward;
    SmallVector<Activity> args =
        reverse ? cast<AutodiffOp>(request).getArgumentActivities()
                : cast<FwddiffOp>(request).getArgumentActivities();
    SmallVector<Activity> rets =
        reverse ? cast<AutodiffOp>(request).getResultActivities()
                : cast<FwddiffOp>(request).getResultActivities();
    if (callee.getNumResults() != 0 || !rets.empty())
      return request->emitOpError("differentiates host function @")
             << callee.getName()
             << ", which returns values; a differentiated host function "
                "returns nothing (write results to buffers)";
    std::string name = (reverse ? "__nabla_vjp_" : "__nabla_jvp_") +
                       callee.getName().str() + "_" + activityCode(args);
    auto derivative = module.lookupSymbol<func::FuncOp>(name);
    if (!derivative) {
      OpBuilder builder(callee);
      auto work = cast<func::FuncOp>(builder.clone(*callee));
      work.setName(name + "_primal");
      llvm::scope_exit eraseWork([&] { work.erase(); });
      if (failed(inlineHostCalls(work)))
        return failure();
      HostDerivative generator(work, module, mode, args, remarks);
      if (failed(generator.analyze()))
        return failure();
      DerivativeSignature signature = DerivativeSignature::expand(
          mode, callee.getArgumentTypes(), callee.getResultTypes(), args,
          rets);
      builder.setInsertionPointAfter(callee);
      derivative = generator.emit(
          builder, name,
          FunctionType::get(module.getContext(), signature.getOperandTypes(),
                            signature.getResultTypes()));
      if (generator.hasFailed())
        return failure();
    }
    OpBuilder builder(request);
    auto call = func::CallOp::create(builder, request->getLoc(), derivative,
                                     request->getOperands());
    request->replaceAllUsesWith(call.getResults());
    request->erase();
  }
  return success();
}
