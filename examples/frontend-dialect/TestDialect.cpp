//===- TestDialect.cpp - A stand-in frontend dialect ----------------------===//
//
// The `nabla_test` ops and `nabla-test-lower`: cube → x·x·x, opaque → x,
// scaled_load → memref.load and mulf, once → its body.
//
//===----------------------------------------------------------------------===//

#include "TestDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace nabla::test;

#include "TestDialect.cpp.inc"

#define GET_OP_CLASSES
#include "TestOps.cpp.inc"

void NablaTestDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TestOps.cpp.inc"
      >();
}

namespace {

/// Rewrites the test ops into arith ops.
struct TestLower : public PassWrapper<TestLower, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestLower)
  StringRef getArgument() const final { return "nabla-test-lower"; }
  StringRef getDescription() const final {
    return "Lower nabla_test ops to arith (tests only)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, memref::MemRefDialect>();
  }
  void runOnOperation() override {
    getOperation()->walk<WalkOrder::PostOrder>([](Operation *op) {
      OpBuilder b(op);
      if (auto cube = dyn_cast<CubeOp>(op)) {
        Value x = cube.getX();
        Value x2 = arith::MulFOp::create(b, op->getLoc(), x, x);
        cube.replaceAllUsesWith(
            arith::MulFOp::create(b, op->getLoc(), x2, x).getResult());
        cube.erase();
      } else if (auto opaque = dyn_cast<OpaqueOp>(op)) {
        opaque.replaceAllUsesWith(opaque.getX());
        opaque.erase();
      } else if (auto load = dyn_cast<ScaledLoadOp>(op)) {
        Value x = memref::LoadOp::create(b, op->getLoc(), load.getMemref(),
                                         load.getIndex());
        load.replaceAllUsesWith(
            arith::MulFOp::create(b, op->getLoc(), x, load.getScale())
                .getResult());
        load.erase();
      } else if (auto once = dyn_cast<OnceOp>(op)) {
        Block &body = once.getBody().front();
        body.getTerminator()->erase();
        op->getBlock()->getOperations().splice(Block::iterator(op),
                                               body.getOperations());
        once.erase();
      }
    });
  }
};

} // namespace

void nabla::test::registerTestPasses() {
  PassRegistration<TestLower>();
  registerTestInternalError();
}
