//===- TestDerivatives.cpp - A frontend's own derivative rules ------------===//
//
// What a frontend writes to make its dialect's ops differentiable: external
// models of Nabla's interfaces (nabla/Dialect/Nabla/IR/NablaInterfaces.h),
// attached in a registry extension, written against the public emitter API
// (DerivativeEmitters.h) only. Nothing in Nabla knows about these ops:
//   - `cube`, a scalar function: DifferentiableOpInterface (its partial);
//   - `scaled_load`, a memory op: ForwardModeOpInterface and
//     ReverseModeOpInterface, reading and accumulating into the shadow;
//   - `once`, a region op: the same interfaces, emitting its body.
//
//===----------------------------------------------------------------------===//

#include "TestDialect.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// r = m[i] * s. Forward: dr = dm[i] * s + m[i] * ds, with dm the shadow
/// of m. Reverse: dm[i] += dr * s (through the emitter: other threads may
/// read the same element), ds += dr * m[i].
struct ScaledLoadForward
    : public nabla::ForwardModeOpInterface::ExternalModel<ScaledLoadForward,
                                                          ScaledLoadOp> {
  LogicalResult emitForwardMode(Operation *op,
                                nabla::ForwardEmitter &emitter) const {
    auto load = cast<ScaledLoadOp>(op);
    emitter.clonePrimal(op);
    if (!emitter.isVaried(load.getResult()))
      return success();
    OpBuilder &b = emitter.builder();
    Location loc = op->getLoc();
    Value index = emitter.primal(load.getIndex());
    Value tangent;
    if (Value shadow = emitter.shadow(load.getMemref())) {
      Value dm = memref::LoadOp::create(b, loc, shadow, index);
      tangent =
          arith::MulFOp::create(b, loc, dm, emitter.primal(load.getScale()));
    }
    if (Value ds = emitter.tangent(load.getScale())) {
      Value m = memref::LoadOp::create(b, loc, emitter.primal(load.getMemref()),
                                       index);
      Value term = arith::MulFOp::create(b, loc, m, ds);
      tangent = tangent ? arith::AddFOp::create(b, loc, tangent, term) : term;
    }
    emitter.setTangent(load.getResult(),
                       tangent ? tangent
                               : emitter.tangentOrZero(load.getResult(), loc));
    return success();
  }
};

struct ScaledLoadReverse
    : public nabla::ReverseModeOpInterface::ExternalModel<ScaledLoadReverse,
                                                          ScaledLoadOp> {
  LogicalResult emitReverseSweep(Operation *op,
                                 nabla::ReverseEmitter &emitter) const {
    auto load = cast<ScaledLoadOp>(op);
    Value dr = emitter.adjoint(load.getResult());
    if (!dr)
      return success();
    OpBuilder &b = emitter.builder();
    Location loc = op->getLoc();
    Value index = emitter.primal(load.getIndex());
    if (Value shadow = emitter.shadow(load.getMemref())) {
      Value contribution =
          arith::MulFOp::create(b, loc, dr, emitter.primal(load.getScale()));
      if (failed(emitter.accumulate(op, shadow, index, contribution)))
        return failure();
    }
    if (emitter.isVaried(load.getScale())) {
      Value m = memref::LoadOp::create(b, loc, emitter.primal(load.getMemref()),
                                       index);
      emitter.addAdjoint(load.getScale(), arith::MulFOp::create(b, loc, dr, m));
    }
    return success();
  }
};

/// `once` runs its body once. Forward mode: a new `once` around the body's
/// primal and tangent code. Reverse mode: the frontend knows the region runs
/// exactly once, so the forward sweep emits the body inline (its values stay
/// available to the reverse sweep) and the reverse sweep the body's adjoints
/// inline, in the current scope.
struct OnceForward
    : public nabla::ForwardModeOpInterface::ExternalModel<OnceForward, OnceOp> {
  LogicalResult emitForwardMode(Operation *op,
                                nabla::ForwardEmitter &emitter) const {
    OpBuilder &b = emitter.builder();
    auto once = OnceOp::create(b, op->getLoc());
    Region &body = once.getBody();
    body.push_back(new Block);
    OnceOp::ensureTerminator(body, b, op->getLoc());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(body.front().getTerminator());
    return emitter.emitBlock(cast<OnceOp>(op).getBody().front());
  }
};

struct OnceReverse
    : public nabla::ReverseModeOpInterface::ExternalModel<OnceReverse, OnceOp> {
  LogicalResult emitForwardSweep(Operation *op,
                                 nabla::ReverseEmitter &emitter) const {
    return emitter.emitBlock(cast<OnceOp>(op).getBody().front());
  }
  LogicalResult emitReverseSweep(Operation *op,
                                 nabla::ReverseEmitter &emitter) const {
    return emitter.emitBlock(cast<OnceOp>(op).getBody().front());
  }
};

} // namespace

void nabla::test::registerTestDialect(DialectRegistry &registry) {
  registry.insert<NablaTestDialect>();
  registry.addExtension(+[](MLIRContext *context, NablaTestDialect *) {
    CubeOp::attachInterface<CubeRule>(*context);
    ScaledLoadOp::attachInterface<ScaledLoadForward, ScaledLoadReverse>(
        *context);
    OnceOp::attachInterface<OnceForward, OnceReverse>(*context);
  });
}
