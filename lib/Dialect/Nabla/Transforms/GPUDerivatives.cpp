//===- GPUDerivatives.cpp - Derivatives of GPU collectives ----------------===//
//
// y = shuffle xor(x, m): lane i reads lane i^m, a permutation that is its own
// inverse, so dx = shuffle xor(dy, m). y = shuffle down(x, d): lane i reads
// lane i+d, so lane j's x went to lane j-d: dx = shuffle up(dy, d), zero where
// that lane does not exist; up is the mirror image. r = subgroup_reduce
// add(x): every lane's r depends on every x with weight 1, so dx is the sum of
// all lanes' dr; for min/max reductions that sum goes to the winning lane (the
// lowest lane holding the result). idx shuffles (a scatter in reverse) and the
// other reductions are rejected with a located error, never differentiated
// wrongly.
//
//===----------------------------------------------------------------------===//

#include "GPUDerivatives.h"

#include "DerivativeRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

bool nabla::isGPUCollective(Operation *op) {
  return isa<gpu::ShuffleOp, gpu::SubgroupReduceOp, gpu::AllReduceOp>(op);
}

/// True for the float min/max reductions, whose derivative goes to the
/// winning lane.
static bool isMinMax(gpu::SubgroupReduceOp reduce) {
  using gpu::AllReduceOperation;
  return llvm::is_contained(
      {AllReduceOperation::MINIMUMF, AllReduceOperation::MAXIMUMF,
       AllReduceOperation::MINNUMF, AllReduceOperation::MAXNUMF},
      reduce.getOp());
}

/// Rejects what the rules below do not cover.
static LogicalResult checkSupported(Operation *op, StringRef mode) {
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    if (shuffle.getMode() == gpu::ShuffleMode::IDX && mode == "reverse")
      return op->emitOpError("has no reverse-mode derivative: the adjoint of "
                             "an idx shuffle is a scatter (use xor, up or "
                             "down)");
    return success();
  }
  if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op)) {
    if (reduce.getOp() != gpu::AllReduceOperation::ADD && !isMinMax(reduce))
      return op->emitOpError("has no ")
             << mode << "-mode derivative: subgroup_reduce add, minimumf, "
             << "maximumf, minnumf and maxnumf are differentiated";
    return success();
  }
  return op->emitOpError("has no ")
         << mode << "-mode derivative rule and is on an active path";
}

/// A `kind` reduction of `value` over the lanes `reduce` reduces over (same
/// uniformity and clusters): the derivatives of add reductions are add
/// reductions; min/max ones find their winner with a minui reduction.
static Value reduceLike(OpBuilder &builder, gpu::SubgroupReduceOp reduce,
                        Value value, gpu::AllReduceOperation kind) {
  return gpu::SubgroupReduceOp::create(
             builder, reduce.getLoc(), value.getType(), value,
             gpu::AllReduceOperationAttr::get(builder.getContext(), kind),
             reduce.getUniformAttr(), reduce.getClusterSizeAttr(),
             reduce.getClusterStrideAttr())
      .getResult();
}

/// `derivative` where this lane is the winner of min/max reduction `reduce`
/// (value `x`, result `r`), zero elsewhere. The winner is the lowest lane
/// holding the result, so ties give the derivative to exactly one lane.
static Value onWinningLane(OpBuilder &builder, gpu::SubgroupReduceOp reduce,
                           Value x, Value r, Value derivative) {
  Location loc = reduce.getLoc();
  Type i32 = builder.getI32Type();
  Value lane = arith::IndexCastOp::create(
      builder, loc, i32, gpu::LaneIdOp::create(builder, loc, nullptr));
  Value none = arith::ConstantOp::create(builder, loc,
                                         builder.getI32IntegerAttr(INT32_MAX));
  Value holds =
      arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ, x, r);
  Value candidate = arith::SelectOp::create(builder, loc, holds, lane, none);
  Value winner =
      reduceLike(builder, reduce, candidate, gpu::AllReduceOperation::MINUI);
  Value mine = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                     lane, winner);
  return arith::SelectOp::create(
      builder, loc, mine, derivative,
      nabla::createZero(builder, loc, derivative.getType()));
}

FailureOr<Value> nabla::emitCollectiveTangent(OpBuilder &builder, Operation *op,
                                              ValueRange operands, Value result,
                                              Value tangent) {
  if (failed(checkSupported(op, "forward")))
    return failure();
  Location loc = op->getLoc();
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op))
    return gpu::ShuffleOp::create(builder, loc, tangent, operands[1],
                                  operands[2], shuffle.getModeAttr())
        .getShuffleResult();
  auto reduce = cast<gpu::SubgroupReduceOp>(op);
  if (isMinMax(reduce))
    return reduceLike(
        builder, reduce,
        onWinningLane(builder, reduce, operands[0], result, tangent),
        gpu::AllReduceOperation::ADD);
  return reduceLike(builder, reduce, tangent, gpu::AllReduceOperation::ADD);
}

FailureOr<Value> nabla::emitCollectiveAdjoint(OpBuilder &builder, Operation *op,
                                              ValueRange operands, Value result,
                                              Value adjoint) {
  if (failed(checkSupported(op, "reverse")))
    return failure();
  Location loc = op->getLoc();
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    gpu::ShuffleMode mode = shuffle.getMode();
    gpu::ShuffleMode transposed =
        mode == gpu::ShuffleMode::DOWN ? gpu::ShuffleMode::UP
        : mode == gpu::ShuffleMode::UP ? gpu::ShuffleMode::DOWN
                                       : mode;
    auto back = gpu::ShuffleOp::create(
        builder, loc, adjoint, operands[1], operands[2],
        gpu::ShuffleModeAttr::get(builder.getContext(), transposed));
    if (mode == gpu::ShuffleMode::XOR)
      return back.getShuffleResult();
    // Lanes whose source lane does not exist receive nothing.
    Value zero = createZero(builder, loc, adjoint.getType());
    return arith::SelectOp::create(builder, loc, back.getValid(),
                                   back.getShuffleResult(), zero)
        .getResult();
  }
  auto reduce = cast<gpu::SubgroupReduceOp>(op);
  if (isMinMax(reduce))
    return onWinningLane(
        builder, reduce, operands[0], result,
        reduceLike(builder, reduce, adjoint, gpu::AllReduceOperation::ADD));
  return reduceLike(builder, reduce, adjoint, gpu::AllReduceOperation::ADD);
}
