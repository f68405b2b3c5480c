//===- GPUDerivatives.cpp - Derivatives of GPU collectives ----------------===//
//
// Shuffles: y = shuffle xor(x, m) has lane i read lane i^m, a permutation
// that is its own inverse, so dx = shuffle xor(dy, m). y = shuffle down(x, d)
// has lane i read lane i+d, so lane j's x went to lane j-d: dx = shuffle
// up(dy, d), zero where that lane does not exist, plus dy itself on the lanes
// whose read fell outside their segment (they got their own x); up is the
// mirror image.
// y = shuffle idx(x, s) gathers, so its adjoint scatters: lane j sums the dy
// of every lane k with s_k = j, found by broadcasting each lane's (s_k, dy_k)
// in turn (width idx shuffles, in lane order).
//
// Reductions (`gpu.subgroup_reduce` over a subgroup or its clusters,
// `gpu.all_reduce` over the workgroup): every member's r depends on every x
// with weight dr/dx_i, the same in every member, so the tangent is the
// reduction (add) of dr/dx_i · dx_i and the adjoint is dr/dx_i times the sum of
// all members' dr. add: weight 1. mul: the product of the other members,
// computed without dividing by zero (the product of the non-zero values over
// x_i when no other member is zero, else zero). min/max: 1 on the winning
// member (the lowest lane, or linear thread id, holding the result), so ties
// give the derivative to exactly one member. Other reductions are rejected
// with a located error, never differentiated wrongly.
//
//===----------------------------------------------------------------------===//

#include "GPUDerivatives.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "DerivativeRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using gpu::AllReduceOperation;

bool nabla::isBarrier(Operation *op) {
  return isa<gpu::BarrierOp, SubgroupBarrierOp>(op);
}

bool nabla::holdsBarrier(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isBarrier(inner) ? WalkResult::interrupt()
                                : WalkResult::advance();
      })
      .wasInterrupted();
}

bool nabla::isGPUCollective(Operation *op) {
  return isa<gpu::ShuffleOp, gpu::SubgroupReduceOp, gpu::AllReduceOp>(op);
}

namespace {

/// A reduction collective: the members it combines, and how to reduce over
/// the same members again.
struct Reduction {
  Operation *op;
  AllReduceOperation kind;

  /// A `kind` reduction of `value` over the same members (same uniformity
  /// and clusters for subgroup reductions).
  Value reduce(OpBuilder &b, Value value, AllReduceOperation kind) const {
    Location loc = op->getLoc();
    auto kindAttr = gpu::AllReduceOperationAttr::get(b.getContext(), kind);
    if (auto sub = dyn_cast<gpu::SubgroupReduceOp>(op))
      return gpu::SubgroupReduceOp::create(
                 b, loc, value.getType(), value, kindAttr, sub.getUniformAttr(),
                 sub.getClusterSizeAttr(), sub.getClusterStrideAttr())
          .getResult();
    auto all = cast<gpu::AllReduceOp>(op);
    return gpu::AllReduceOp::create(b, loc, value.getType(), value, kindAttr,
                                    all.getUniformAttr())
        .getResult();
  }

  /// The calling thread's rank among the members (i32): its lane, or its
  /// linear thread id in the workgroup.
  Value member(OpBuilder &b) const {
    Location loc = op->getLoc();
    Value rank = isa<gpu::SubgroupReduceOp>(op)
                     ? gpu::LaneIdOp::create(b, loc, nullptr).getResult()
                     : nabla::emitLinearIdAndCount(b, loc).first;
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), rank);
  }
};

} // namespace

std::pair<Value, Value> nabla::emitLinearIdAndCount(OpBuilder &b, Location loc,
                                                    bool ofBlocks) {
  Value id, count;
  for (gpu::Dimension d :
       {gpu::Dimension::z, gpu::Dimension::y, gpu::Dimension::x}) {
    Value i = ofBlocks ? gpu::BlockIdOp::create(b, loc, d).getResult()
                       : gpu::ThreadIdOp::create(b, loc, d).getResult();
    Value size = ofBlocks ? gpu::GridDimOp::create(b, loc, d).getResult()
                          : gpu::BlockDimOp::create(b, loc, d).getResult();
    id = id ? arith::AddIOp::create(b, loc,
                                    arith::MulIOp::create(b, loc, id, size), i)
            : i;
    count = count ? arith::MulIOp::create(b, loc, count, size) : size;
  }
  return {id, count};
}

Value nabla::emitShareOf(OpBuilder &b, Location loc, Value size,
                         Value threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  return arith::DivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc,
                            arith::AddIOp::create(b, loc, size, threads), one),
      threads);
}

static bool isMinMax(AllReduceOperation kind) {
  return llvm::is_contained(
      {AllReduceOperation::MINIMUMF, AllReduceOperation::MAXIMUMF,
       AllReduceOperation::MINNUMF, AllReduceOperation::MAXNUMF},
      kind);
}

/// The reduction `op` is, if it is one Nabla differentiates; a located error
/// for every other collective.
static FailureOr<std::optional<Reduction>> classify(Operation *op,
                                                    StringRef mode) {
  if (isa<gpu::ShuffleOp>(op))
    return std::optional<Reduction>();
  std::optional<AllReduceOperation> kind;
  if (auto sub = dyn_cast<gpu::SubgroupReduceOp>(op))
    kind = sub.getOp();
  else if (auto all = dyn_cast<gpu::AllReduceOp>(op))
    kind = all.getOp();
  if (!isa<FloatType>(op->getResult(0).getType()))
    return op->emitOpError("of a vector has no ")
           << mode << "-mode derivative (reduce each element)";
  if (!kind)
    return op->emitOpError("with a custom combiner region has no ")
           << mode << "-mode derivative (use an `op` attribute)";
  if (*kind != AllReduceOperation::ADD && *kind != AllReduceOperation::MUL &&
      !isMinMax(*kind))
    return op->emitOpError("has no ")
           << mode << "-mode derivative: add, mul, minimumf, maximumf, "
           << "minnumf and maxnumf reductions are differentiated";
  return std::optional<Reduction>(Reduction{op, *kind});
}

/// dr/dx for the calling member of reduction `red` (value `x`, result `r`).
static Value emitWeight(OpBuilder &b, const Reduction &red, Value x, Value r) {
  Location loc = red.op->getLoc();
  Type type = x.getType();
  Value zero = nabla::createZero(b, loc, type);
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
  if (red.kind == AllReduceOperation::ADD)
    return one;
  if (red.kind == AllReduceOperation::MUL) {
    Value isZero =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, zero);
    Value nonZero = arith::SelectOp::create(b, loc, isZero, one, x);
    Value product = red.reduce(b, nonZero, AllReduceOperation::MUL);
    Value count = arith::SelectOp::create(b, loc, isZero, one, zero);
    Value zeros = red.reduce(b, count, AllReduceOperation::ADD);
    Value others = arith::SubFOp::create(b, loc, zeros, count);
    Value noneElsewhere =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, others, zero);
    Value quotient = arith::DivFOp::create(b, loc, product, nonZero);
    return arith::SelectOp::create(b, loc, noneElsewhere, quotient, zero);
  }
  // min/max: the lowest member holding the result wins.
  Value rank = red.member(b);
  Value none =
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(INT32_MAX));
  Value holds = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, r);
  Value candidate = arith::SelectOp::create(b, loc, holds, rank, none);
  Value winner = red.reduce(b, candidate, AllReduceOperation::MINUI);
  Value mine =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank, winner);
  return arith::SelectOp::create(b, loc, mine, one, zero);
}

FailureOr<Value> nabla::emitCollectiveTangent(OpBuilder &builder, Operation *op,
                                              ValueRange operands, Value result,
                                              Value tangent) {
  FailureOr<std::optional<Reduction>> red = classify(op, "forward");
  if (failed(red))
    return failure();
  Location loc = op->getLoc();
  if (!*red) {
    auto shuffle = cast<gpu::ShuffleOp>(op);
    return gpu::ShuffleOp::create(builder, loc, tangent, operands[1],
                                  operands[2], shuffle.getModeAttr())
        .getShuffleResult();
  }
  Value weighted = tangent;
  if ((*red)->kind != AllReduceOperation::ADD)
    weighted = nabla::scaleByPartial(
        builder, loc, tangent, emitWeight(builder, **red, operands[0], result));
  return (*red)->reduce(builder, weighted, AllReduceOperation::ADD);
}

/// The adjoint of an idx shuffle: each lane k in turn broadcasts its source
/// lane and its adjoint; the lane it read from accumulates it. Lanes are
/// numbered within the shuffle's segment of `width` consecutive linear
/// thread ids, as the shuffle itself numbers them on every target (not the
/// device's subgroup lane, which differs where subgroups are narrower than
/// the emulated warp: lavapipe's 8 lanes).
static Value emitIdxShuffleAdjoint(OpBuilder &b, gpu::ShuffleOp shuffle,
                                   ValueRange operands, Value adjoint) {
  Location loc = shuffle.getLoc();
  Value source = operands[1], width = operands[2];
  Type i32 = b.getI32Type();
  Value lane = arith::IndexCastOp::create(
      b, loc, i32,
      arith::RemUIOp::create(
          b, loc, nabla::emitLinearIdAndCount(b, loc).first,
          arith::IndexCastOp::create(b, loc, b.getIndexType(), width)));
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::IndexCastOp::create(b, loc, b.getIndexType(), width);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = nabla::createZero(b, loc, adjoint.getType());
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, step, ValueRange{zero},
      [&](OpBuilder &nested, Location nestedLoc, Value k, ValueRange acc) {
        Value from = arith::IndexCastOp::create(nested, nestedLoc, i32, k);
        auto idx = gpu::ShuffleModeAttr::get(nested.getContext(),
                                             gpu::ShuffleMode::IDX);
        Value readLane =
            gpu::ShuffleOp::create(nested, nestedLoc, source, from, width, idx)
                .getShuffleResult();
        Value sent =
            gpu::ShuffleOp::create(nested, nestedLoc, adjoint, from, width, idx)
                .getShuffleResult();
        Value mine = arith::CmpIOp::create(
            nested, nestedLoc, arith::CmpIPredicate::eq, readLane, lane);
        Value added = arith::AddFOp::create(nested, nestedLoc, acc[0], sent);
        scf::YieldOp::create(
            nested, nestedLoc,
            arith::SelectOp::create(nested, nestedLoc, mine, added, acc[0])
                .getResult());
      });
  return loop.getResult(0);
}

FailureOr<Value> nabla::emitCollectiveAdjoint(OpBuilder &builder, Operation *op,
                                              ValueRange operands, Value result,
                                              Value adjoint) {
  FailureOr<std::optional<Reduction>> red = classify(op, "reverse");
  if (failed(red))
    return failure();
  Location loc = op->getLoc();
  if (*red) {
    Value total = (*red)->reduce(builder, adjoint, AllReduceOperation::ADD);
    if ((*red)->kind == AllReduceOperation::ADD)
      return total;
    return nabla::scaleByPartial(
        builder, loc, total, emitWeight(builder, **red, operands[0], result));
  }
  auto shuffle = cast<gpu::ShuffleOp>(op);
  gpu::ShuffleMode mode = shuffle.getMode();
  if (mode == gpu::ShuffleMode::IDX)
    return emitIdxShuffleAdjoint(builder, shuffle, operands, adjoint);
  gpu::ShuffleMode transposed =
      mode == gpu::ShuffleMode::DOWN ? gpu::ShuffleMode::UP
      : mode == gpu::ShuffleMode::UP ? gpu::ShuffleMode::DOWN
                                     : mode;
  auto back = gpu::ShuffleOp::create(
      builder, loc, adjoint, operands[1], operands[2],
      gpu::ShuffleModeAttr::get(builder.getContext(), transposed));
  if (mode == gpu::ShuffleMode::XOR)
    return back.getShuffleResult();
  // Lanes whose source lane does not exist receive nothing from it. A lane
  // whose own read fell outside its segment got its own value (CUDA's
  // `__shfl_down_sync`, and how every target lowers gpu.shuffle): its
  // adjoint stays with it. The forward's validity is that of a shuffle in
  // the forward direction from this lane.
  Value zero = createZero(builder, loc, adjoint.getType());
  Value received = arith::SelectOp::create(builder, loc, back.getValid(),
                                           back.getShuffleResult(), zero);
  auto forward = gpu::ShuffleOp::create(builder, loc, adjoint, operands[1],
                                        operands[2], shuffle.getModeAttr());
  Value own =
      arith::SelectOp::create(builder, loc, forward.getValid(), zero, adjoint);
  return arith::AddFOp::create(builder, loc, received, own).getResult();
}
