//===- GPUDerivatives.cpp - Derivatives of GPU collectives ----------------===//
//
// y = shuffle xor(x, m): lane i reads lane i^m, a permutation that is its own
// inverse, so dx = shuffle xor(dy, m). y = shuffle down(x, d): lane i reads
// lane i+d, so lane j's x went to lane j-d: dx = shuffle up(dy, d), zero where
// that lane does not exist; up is the mirror image. r = subgroup_reduce
// add(x): every lane's r depends on every x with weight 1, so dx is the sum of
// all lanes' dr. idx shuffles (a scatter in reverse) and the other reductions
// are rejected with a located error, never differentiated wrongly.
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
    if (reduce.getOp() != gpu::AllReduceOperation::ADD)
      return op->emitOpError("has no ")
             << mode << "-mode derivative: only subgroup_reduce add is "
             << "differentiated";
    return success();
  }
  return op->emitOpError("has no ")
         << mode << "-mode derivative rule and is on an active path";
}

/// The same subgroup reduction as `reduce`, of `value`: the tangent and the
/// adjoint of an add reduction are add reductions.
static Value reduceLike(OpBuilder &builder, gpu::SubgroupReduceOp reduce,
                        Value value) {
  return gpu::SubgroupReduceOp::create(
             builder, reduce.getLoc(), value.getType(), value,
             reduce.getOpAttr(), reduce.getUniformAttr(),
             reduce.getClusterSizeAttr(), reduce.getClusterStrideAttr())
      .getResult();
}

FailureOr<Value> nabla::emitCollectiveTangent(OpBuilder &builder, Operation *op,
                                              ValueRange operands,
                                              Value tangent) {
  if (failed(checkSupported(op, "forward")))
    return failure();
  Location loc = op->getLoc();
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op))
    return gpu::ShuffleOp::create(builder, loc, tangent, operands[1],
                                  operands[2], shuffle.getModeAttr())
        .getShuffleResult();
  return reduceLike(builder, cast<gpu::SubgroupReduceOp>(op), tangent);
}

FailureOr<Value> nabla::emitCollectiveAdjoint(OpBuilder &builder, Operation *op,
                                              ValueRange operands,
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
  return reduceLike(builder, cast<gpu::SubgroupReduceOp>(op), adjoint);
}
