//===- WarpCollectives.cpp - CUDA's warp votes and reductions -------------===//
//
// `__ballot_sync`, `__any_sync`, `__all_sync`, `__uni_sync` (NVVM
// vote.*.sync) and sm_80's `__reduce_{add,min,max,and,or,xor}_sync` (NVVM
// redux.sync.*) over a full warp become butterflies of 32-wide xor shuffles
// combining integers: CUDA's warps are 32 consecutive linear thread ids on
// every target (RaiseControl.cpp), and 32-wide shuffles mean that everywhere,
// also where subgroups are narrower. Every lane gets the warp's result. A
// partial mask is a located error (the lanes it leaves out would take part).
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace nabla::raise;

namespace {
enum class Combine { Add, Min, Max, MinU, MaxU, And, Or, Xor };
} // namespace

static Value combine(OpBuilder &b, Location loc, Combine kind, Value x,
                     Value y) {
  switch (kind) {
  case Combine::Add:
    return arith::AddIOp::create(b, loc, x, y);
  case Combine::Min:
    return arith::MinSIOp::create(b, loc, x, y);
  case Combine::Max:
    return arith::MaxSIOp::create(b, loc, x, y);
  case Combine::MinU:
    return arith::MinUIOp::create(b, loc, x, y);
  case Combine::MaxU:
    return arith::MaxUIOp::create(b, loc, x, y);
  case Combine::And:
    return arith::AndIOp::create(b, loc, x, y);
  case Combine::Or:
    return arith::OrIOp::create(b, loc, x, y);
  case Combine::Xor:
    return arith::XOrIOp::create(b, loc, x, y);
  }
  llvm_unreachable("unknown combine");
}

/// `value` (i32) combined over the 32 lanes of the warp, in every lane.
static Value warpReduce(OpBuilder &b, Location loc, Combine kind, Value value) {
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 32);
  for (int offset = 16; offset > 0; offset /= 2) {
    Value delta = arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
    Value other = gpu::ShuffleOp::create(b, loc, value, delta, width,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = combine(b, loc, kind, value, other);
  }
  return value;
}

FailureOr<bool> FunctionRaiser::raiseWarpCollective(Operation *op,
                                                    StringRef name) {
  bool vote = name.consume_front("llvm.nvvm.vote.");
  bool redux = !vote && name.consume_front("llvm.nvvm.redux.sync.");
  if (!vote && !redux)
    return false;
  if (!name.consume_back(".sync") && vote)
    return false;
  Location loc = plainLoc(op->getLoc());
  // vote.*.sync(mask, predicate), redux.sync.*(value, mask).
  if (op->getNumOperands() != 2 || op->getNumResults() != 1)
    return fail(op) << "cannot raise this warp collective";
  Value mask = op->getOperand(vote ? 0 : 1);
  APInt maskValue;
  if (!matchPattern(mask, m_ConstantInt(&maskValue)) || !maskValue.isAllOnes())
    return fail(op) << "cannot raise a warp vote or reduction over a partial "
                       "mask (only 0xffffffff: the whole warp)";
  Value operand = lookup(op, op->getOperand(vote ? 1 : 0));
  if (!operand)
    return failure();
  Type i32 = builder.getI32Type();
  Value result;
  if (redux) {
    std::optional<Combine> kind =
        llvm::StringSwitch<std::optional<Combine>>(name)
            .Case("add", Combine::Add)
            .Case("min", Combine::Min)
            .Case("max", Combine::Max)
            .Case("umin", Combine::MinU)
            .Case("umax", Combine::MaxU)
            .Case("and", Combine::And)
            .Case("or", Combine::Or)
            .Case("xor", Combine::Xor)
            .Default(std::nullopt);
    if (!kind || operand.getType() != i32)
      return fail(op) << "cannot raise the warp reduction '" << name << "'";
    result = warpReduce(builder, loc, *kind, operand);
  } else {
    Value bit = arith::ExtUIOp::create(builder, loc, i32, operand);
    Value zero = arith::ConstantIntOp::create(builder, loc, i32, 0);
    auto nonZero = [&](Value v) -> Value {
      return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne, v,
                                   zero);
    };
    if (name == "ballot") {
      Value lane = arith::IndexCastOp::create(
          builder, loc, i32,
          arith::RemUIOp::create(builder, loc, linearThreadId(loc),
                                 indexConstant(loc, 32)));
      Value own = arith::ShLIOp::create(builder, loc, bit, lane);
      result = warpReduce(builder, loc, Combine::Or, own);
    } else if (name == "any") {
      result = nonZero(warpReduce(builder, loc, Combine::Or, bit));
    } else if (name == "all") {
      result = nonZero(warpReduce(builder, loc, Combine::And, bit));
    } else if (name == "uni") {
      Value all = nonZero(warpReduce(builder, loc, Combine::And, bit));
      Value any = nonZero(warpReduce(builder, loc, Combine::Or, bit));
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
