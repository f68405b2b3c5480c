//===- Arith.cpp - Derivatives of float width conversions -----------------===//
//
// arith.extf and arith.truncf convert the derivative like the value (a
// tangent forward, an adjoint back to the operand's width). The other arith
// ops with a float result have scalar rules (DifferentiableOpInterface,
// DerivativeRules.td).
//
//===----------------------------------------------------------------------===//

#include "EmitterHooks.h"

#include "../DerivativeRules.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace nabla;

namespace {

template <typename OpTy>
struct WidthForward
    : public ForwardModeOpInterface::ExternalModel<WidthForward<OpTy>, OpTy> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    Operation *clone = emitter.clonePrimal(op);
    if (!emitter.isVaried(op->getResult(0)))
      return success();
    emitter.setTangent(
        op->getResult(0),
        castDerivative(emitter.builder(), clone,
                       emitter.tangentOrZero(op->getOperand(0), op->getLoc()),
                       /*toOperand=*/false));
    return success();
  }
};

template <typename OpTy>
struct WidthReverse
    : public ReverseModeOpInterface::ExternalModel<WidthReverse<OpTy>, OpTy> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    Value d = emitter.adjoint(op->getResult(0));
    if (!d || !emitter.isVaried(op->getOperand(0)))
      return success();
    emitter.addAdjoint(op->getOperand(0),
                       castDerivative(emitter.builder(), op, d,
                                      /*toOperand=*/true));
    return success();
  }
};

template <typename OpTy> void attachWidth(MLIRContext &context) {
  OpTy::template attachInterface<WidthForward<OpTy>, WidthReverse<OpTy>>(
      context);
}

} // namespace

void nabla::registerArithDerivativeModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    attachWidth<arith::ExtFOp>(*context);
    attachWidth<arith::TruncFOp>(*context);
  });
}
