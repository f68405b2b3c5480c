//===- Func.cpp - Derivatives of calls ------------------------------------===//
//
// A call on an active path is differentiated by the custom rule registered
// for its callee and activities (`nabla.forward_rule`/`nabla.reverse_rule`,
// DESIGN.md); calls that touch no differentiated data are only cloned.
// (Calls Nabla can see into are inlined before differentiation.)
//
//===----------------------------------------------------------------------===//

#include "EmitterHooks.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace nabla;

namespace {

struct CallForward
    : public ForwardModeOpInterface::ExternalModel<CallForward, func::CallOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    if (!emitter.isActive(op)) {
      emitter.clonePrimal(op);
      return success();
    }
    return hooks::forwardCall(emitter, cast<func::CallOp>(op));
  }
};

struct CallReverse
    : public ReverseModeOpInterface::ExternalModel<CallReverse, func::CallOp> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    if (!emitter.isActive(op))
      return success();
    return hooks::reverseCall(emitter, cast<func::CallOp>(op));
  }
};

} // namespace

void nabla::registerFuncDerivativeModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    func::CallOp::attachInterface<CallForward, CallReverse>(*context);
  });
}
