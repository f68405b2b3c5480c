//===- WarpCollectives.cpp - CUDA's warp votes and reductions -------------===//
//
// `__ballot_sync`, `__any_sync`, `__all_sync`, `__uni_sync` (NVVM
// vote.*.sync) and sm_80's `__reduce_{add,min,max,and,or,xor}_sync` (NVVM
// redux.sync.*) become butterflies of 32-wide xor shuffles combining
// integers: CUDA's warps are 32 consecutive linear thread ids on every target
// (RaiseControl.cpp), and 32-wide shuffles mean that everywhere, also where
// subgroups are narrower. Every lane gets the warp's result; a lane whose
// partner does not exist (a block of 48 threads: its second warp has 16
// lanes) takes the operation's identity from it (where subgroups are
// narrower, the exchange through workgroup memory would read what another
// workgroup left there).
//
// A mask other than the constant 0xffffffff (reduce7's `__ballot_sync(~0u,
// tid < n)` passed on inside `if (tid < n)`, a block of 16 threads' 0xffff)
// names the lanes taking part: each lane outside it contributes the identity
// (0 to a sum or a ballot, 1 to `__all_sync`), which is exact when every lane
// of the warp runs the butterfly. The shuffles are marked
// `nabla.partial_mask`, and ConvergeWarps.cpp makes every lane run them.
// `__activemask()` becomes `nabla.active_lanes`, which ConvergeWarps.cpp
// resolves into a ballot of the predicate it runs under.
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace nabla::raise;

static Value combine(OpBuilder &b, Location loc, WarpCombine kind, Value x,
                     Value y) {
  switch (kind) {
  case WarpCombine::Add:
    return arith::AddIOp::create(b, loc, x, y);
  case WarpCombine::Min:
    return arith::MinSIOp::create(b, loc, x, y);
  case WarpCombine::Max:
    return arith::MaxSIOp::create(b, loc, x, y);
  case WarpCombine::MinU:
    return arith::MinUIOp::create(b, loc, x, y);
  case WarpCombine::MaxU:
    return arith::MaxUIOp::create(b, loc, x, y);
  case WarpCombine::And:
    return arith::AndIOp::create(b, loc, x, y);
  case WarpCombine::Or:
    return arith::OrIOp::create(b, loc, x, y);
  case WarpCombine::Xor:
    return arith::XOrIOp::create(b, loc, x, y);
  }
  llvm_unreachable("unknown combine");
}

/// The i32 that combined with any x by `kind` gives x.
static Value identity(OpBuilder &b, Location loc, WarpCombine kind) {
  int64_t value = 0;
  switch (kind) {
  case WarpCombine::Min:
    value = INT32_MAX;
    break;
  case WarpCombine::Max:
    value = INT32_MIN;
    break;
  case WarpCombine::MinU:
  case WarpCombine::And:
    value = -1;
    break;
  default:
    break;
  }
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

Value nabla::raise::buildLinearThreadId(OpBuilder &b, Location loc) {
  auto id = [&](gpu::Dimension d) -> Value {
    return gpu::ThreadIdOp::create(b, loc, d);
  };
  auto dim = [&](gpu::Dimension d) -> Value {
    return gpu::BlockDimOp::create(b, loc, d);
  };
  Value yz = arith::AddIOp::create(
      b, loc, id(gpu::Dimension::y),
      arith::MulIOp::create(b, loc, dim(gpu::Dimension::y),
                            id(gpu::Dimension::z)));
  return arith::AddIOp::create(
      b, loc, id(gpu::Dimension::x),
      arith::MulIOp::create(b, loc, dim(gpu::Dimension::x), yz));
}

Value nabla::raise::buildWarpLane(OpBuilder &b, Location loc) {
  Value lane = arith::RemUIOp::create(
      b, loc, buildLinearThreadId(b, loc),
      arith::ConstantIndexOp::create(b, loc, 32));
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), lane);
}

Value nabla::raise::buildMaskBit(OpBuilder &b, Location loc, Value mask,
                                 Value lane) {
  Type i32 = b.getI32Type();
  Value bit = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, mask, lane),
      arith::ConstantIntOp::create(b, loc, i32, 1));
  return arith::TruncIOp::create(b, loc, b.getI1Type(), bit);
}

Value nabla::raise::buildWarpReduce(OpBuilder &b, Location loc,
                                    WarpCombine kind, Value value,
                                    bool partialMask) {
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 32);
  // A partner past the block's last thread (the block's last warp may be
  // partial) holds nothing: its value is undefined on NVVM and whatever
  // workgroup memory held where subgroups are narrower.
  Value linear = buildLinearThreadId(b, loc);
  Value lane = arith::RemUIOp::create(
      b, loc, linear, arith::ConstantIndexOp::create(b, loc, 32));
  Value warpBase = arith::SubIOp::create(b, loc, linear, lane);
  Value dx = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
  Value dy = gpu::BlockDimOp::create(b, loc, gpu::Dimension::y);
  Value dz = gpu::BlockDimOp::create(b, loc, gpu::Dimension::z);
  Value threads =
      arith::MulIOp::create(b, loc, dx, arith::MulIOp::create(b, loc, dy, dz));
  for (int offset = 16; offset > 0; offset /= 2) {
    Value delta = arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
    auto shuffle = gpu::ShuffleOp::create(b, loc, value, delta, width,
                                          gpu::ShuffleMode::XOR);
    if (partialMask)
      shuffle->setAttr(kPartialMaskAttrName, b.getUnitAttr());
    Value partner = arith::AddIOp::create(
        b, loc, warpBase,
        arith::XOrIOp::create(b, loc, lane,
                              arith::ConstantIndexOp::create(b, loc, offset)));
    Value exists = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         partner, threads);
    Value other = arith::SelectOp::create(
        b, loc, exists, shuffle.getShuffleResult(), identity(b, loc, kind));
    value = combine(b, loc, kind, value, other);
  }
  return value;
}

Value nabla::raise::buildWarpBallot(OpBuilder &b, Location loc,
                                    Value predicate, bool partialMask) {
  Type i32 = b.getI32Type();
  Value bit = arith::ExtUIOp::create(b, loc, i32, predicate);
  Value own = arith::ShLIOp::create(b, loc, bit, buildWarpLane(b, loc));
  return buildWarpReduce(b, loc, WarpCombine::Or, own, partialMask);
}

FailureOr<bool> FunctionRaiser::raiseWarpCollective(Operation *op,
                                                    StringRef name) {
  Location loc = plainLoc(op->getLoc());
  if (name == "llvm.nvvm.activemask") {
    if (op->getNumOperands() != 0 || op->getNumResults() != 1 ||
        !op->getResult(0).getType().isInteger(32))
      return fail(op) << "cannot raise this __activemask";
    scalars.map(op->getResult(0),
                nabla::ActiveLanesOp::create(builder, loc, builder.getI32Type())
                    .getMask());
    return true;
  }
  bool vote = name.consume_front("llvm.nvvm.vote.");
  bool redux = !vote && name.consume_front("llvm.nvvm.redux.sync.");
  if (!vote && !redux)
    return false;
  if (!name.consume_back(".sync") && vote)
    return false;
  // vote.*.sync(mask, predicate), redux.sync.*(value, mask).
  if (op->getNumOperands() != 2 || op->getNumResults() != 1)
    return fail(op) << "cannot raise this warp collective";
  Value operand = lookup(op, op->getOperand(vote ? 1 : 0));
  if (!operand)
    return failure();
  Type i32 = builder.getI32Type();
  // Lanes outside a partial mask contribute the identity.
  APInt maskValue;
  bool partial = !matchPattern(op->getOperand(vote ? 0 : 1),
                               m_ConstantInt(&maskValue)) ||
                 !maskValue.isAllOnes();
  Value inMask;
  if (partial) {
    Value mask = lookup(op, op->getOperand(vote ? 0 : 1));
    if (!mask)
      return failure();
    inMask = buildMaskBit(builder, loc, mask, buildWarpLane(builder, loc));
  }
  Value result;
  if (redux) {
    std::optional<WarpCombine> kind =
        llvm::StringSwitch<std::optional<WarpCombine>>(name)
            .Case("add", WarpCombine::Add)
            .Case("min", WarpCombine::Min)
            .Case("max", WarpCombine::Max)
            .Case("umin", WarpCombine::MinU)
            .Case("umax", WarpCombine::MaxU)
            .Case("and", WarpCombine::And)
            .Case("or", WarpCombine::Or)
            .Case("xor", WarpCombine::Xor)
            .Default(std::nullopt);
    if (!kind || operand.getType() != i32)
      return fail(op) << "cannot raise the warp reduction '" << name << "'";
    if (partial)
      operand = arith::SelectOp::create(builder, loc, inMask, operand,
                                        identity(builder, loc, *kind));
    result = buildWarpReduce(builder, loc, *kind, operand, partial);
  } else {
    Value zero = arith::ConstantIntOp::create(builder, loc, i32, 0);
    auto nonZero = [&](Value v) -> Value {
      return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne, v,
                                   zero);
    };
    // What a lane contributes to an any (or a ballot), and to an all.
    Value forAny = operand, forAll = operand;
    if (partial) {
      forAny = arith::AndIOp::create(builder, loc, operand, inMask);
      Value outside = arith::XOrIOp::create(
          builder, loc, inMask,
          arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1));
      forAll = arith::OrIOp::create(builder, loc, operand, outside);
    }
    auto reduce = [&](WarpCombine kind, Value predicate) {
      return nonZero(buildWarpReduce(
          builder, loc, kind,
          arith::ExtUIOp::create(builder, loc, i32, predicate), partial));
    };
    if (name == "ballot") {
      result = buildWarpBallot(builder, loc, forAny, partial);
    } else if (name == "any") {
      result = reduce(WarpCombine::Or, forAny);
    } else if (name == "all") {
      result = reduce(WarpCombine::And, forAll);
    } else if (name == "uni") {
      Value all = reduce(WarpCombine::And, forAll);
      Value any = reduce(WarpCombine::Or, forAny);
      Value none = arith::XOrIOp::create(
          builder, loc, any,
          arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1));
      result = arith::OrIOp::create(builder, loc, all, none);
    } else {
      return fail(op) << "cannot raise the warp vote '" << name << "'";
    }
  }
  if (result.getType() != op->getResult(0).getType())
    return fail(op) << "cannot raise this warp collective's result type";
  scalars.map(op->getResult(0), result);
  return true;
}
