//===- TestDerivatives.cpp - A frontend's own derivative rule -------------===//
//
// What a frontend writes to make its dialect's ops differentiable: an
// external model of nabla::DifferentiableOpInterface, attached in a registry
// extension. Nothing in Nabla knows about `nabla_test.cube`.
//
//===----------------------------------------------------------------------===//

#include "TestDialect.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace nabla::test;

namespace {

/// d(x³)/dx = 3x².
struct CubeRule
    : public nabla::DifferentiableOpInterface::ExternalModel<CubeRule, CubeOp> {
  FailureOr<SmallVector<Value>> emitPartials(Operation *op,
                                             OpBuilder &builder) const {
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    Value three = arith::ConstantOp::create(
        builder, loc, builder.getFloatAttr(x.getType(), 3.0));
    Value x2 = arith::MulFOp::create(builder, loc, x, x);
    return SmallVector<Value>{arith::MulFOp::create(builder, loc, three, x2)};
  }
};

} // namespace

void nabla::test::registerTestDialect(DialectRegistry &registry) {
  registry.insert<NablaTestDialect>();
  registry.addExtension(+[](MLIRContext *context, NablaTestDialect *) {
    CubeOp::attachInterface<CubeRule>(*context);
  });
}
