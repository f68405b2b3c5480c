//===- Reloc.cpp - Derivatives of relocated host objects ------------------===//
//
// A `reloc.get_global` of a record holding differentiated data gets the
// shadow of the record's object (its `shadow_of` record, RecordShadows.h).
// In reverse mode the shadow is made at function entry, where the reverse
// sweep, outside every region, reaches it.
//
//===----------------------------------------------------------------------===//

#include "EmitterHooks.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"
#include "nabla/Dialect/Reloc/IR/RelocDialect.h"
#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace nabla;

namespace {

struct GetGlobalForward
    : public ForwardModeOpInterface::ExternalModel<GetGlobalForward,
                                                   reloc::GetGlobalOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    auto get = cast<reloc::GetGlobalOp>(op);
    emitter.clonePrimal(op);
    if (emitter.isShadowed(get.getResult()))
      emitter.setShadow(get.getResult(), hooks::recordShadow(emitter, get));
    return success();
  }
};

struct GetGlobalReverse
    : public ReverseModeOpInterface::ExternalModel<GetGlobalReverse,
                                                   reloc::GetGlobalOp> {
  LogicalResult emitForwardSweep(Operation *op, ReverseEmitter &emitter) const {
    auto get = cast<reloc::GetGlobalOp>(op);
    if (emitter.clonePrimal(op) && emitter.isShadowed(get.getResult()))
      hooks::recordShadow(emitter, get);
    return success();
  }
  LogicalResult emitReverseSweep(Operation *, ReverseEmitter &) const {
    return success();
  }
};

} // namespace

void nabla::registerRelocDerivativeModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, reloc::RelocDialect *) {
    reloc::GetGlobalOp::attachInterface<GetGlobalForward, GetGlobalReverse>(
        *context);
  });
}
