//===- CountedWhileLoops.cpp - Do-while loops with a counter as scf.for ---===//
//
// See CountedWhileLoops.h.
//
//===----------------------------------------------------------------------===//

#include "CountedWhileLoops.h"
#include "Reverse/ReverseMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace nabla;

namespace {

/// The parts of a counted do-while.
struct CountedWhile {
  unsigned counter;      // position of the counter among the loop values
  Value lb, bound;       // its initial value and the bound it is tested with
  Value step;            // its increment, positive (a constant, or a value
                         // defined outside the loop: a block or grid size)
  arith::CmpIPredicate predicate; // ne, slt or ult (counter on the left)
  bool testsOld;         // the test reads the counter before its increment
};

scf::ForOp replaceWithFor(scf::WhileOp loop, Value count);

/// `predicate` with its operands exchanged.
arith::CmpIPredicate swapped(arith::CmpIPredicate predicate) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::slt: return P::sgt;
  case P::sgt: return P::slt;
  case P::sle: return P::sge;
  case P::sge: return P::sle;
  case P::ult: return P::ugt;
  case P::ugt: return P::ult;
  case P::ule: return P::uge;
  case P::uge: return P::ule;
  default: return predicate; // eq, ne
  }
}

/// The comparison a do-while tests: its before region runs the body and
/// passes its values on as they will be next (same types), its after region
/// only forwards them. Null otherwise.
arith::CmpIOp getDoWhileTest(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  Block &after = loop.getAfter().front();
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  if (&after.front() != yield.getOperation() ||
      yield.getOperands() != ValueRange(after.getArguments()))
    return {};
  scf::ConditionOp condition = loop.getConditionOp();
  if (condition.getArgs().getTypes() != before.getArgumentTypes())
    return {};
  auto cmp = condition.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp->getBlock() != &before)
    return {};
  return cmp;
}

std::optional<CountedWhile> match(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  scf::ConditionOp condition = loop.getConditionOp();
  arith::CmpIOp cmp = getDoWhileTest(loop);
  if (!cmp)
    return std::nullopt;
  for (auto [k, next] : llvm::enumerate(condition.getArgs())) {
    auto add = next.getDefiningOp<arith::AddIOp>();
    if (!add)
      continue;
    Value iv = before.getArgument(k);
    Value other = add.getLhs() == iv ? add.getRhs()
                  : add.getRhs() == iv ? add.getLhs()
                                       : Value();
    if (!other)
      continue;
    // A constant step is positive; a step defined outside the loop is
    // assumed positive under an ordered test (a loop `i < n` whose step is
    // not would never end), and a `ne` test needs a constant step.
    std::optional<int64_t> constantStep = getConstantIntValue(other);
    if (constantStep ? *constantStep <= 0
                     : loop->isAncestor(other.getParentRegion()->getParentOp()))
      continue;
    arith::CmpIPredicate predicate = cmp.getPredicate();
    Value bound;
    bool testsOld = false;
    for (Value counter : {next, iv}) {
      if (cmp.getLhs() == counter) {
        bound = cmp.getRhs();
      } else if (cmp.getRhs() == counter) {
        bound = cmp.getLhs();
        predicate = swapped(predicate);
      }
      if (bound) {
        testsOld = counter == iv;
        break;
      }
    }
    // The bound is defined outside the loop.
    if (!bound || loop->isAncestor(bound.getParentRegion()->getParentOp()))
      continue;
    if (predicate != arith::CmpIPredicate::ne &&
        predicate != arith::CmpIPredicate::slt &&
        predicate != arith::CmpIPredicate::ult)
      continue;
    if (!constantStep && predicate == arith::CmpIPredicate::ne)
      continue;
    return CountedWhile{unsigned(k), loop.getInits()[k], bound, other,
                        predicate, testsOld};
  }
  return std::nullopt;
}

void rewrite(scf::WhileOp loop, const CountedWhile &counted) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Type type = counted.lb.getType();
  Value step = counted.step;
  Value one = arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1));
  Value span = arith::SubIOp::create(b, loc, counted.bound, counted.lb);
  Value steps, more;
  switch (counted.predicate) {
  case arith::CmpIPredicate::slt:
    steps = arith::CeilDivSIOp::create(b, loc, span, step);
    more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                 counted.bound, counted.lb);
    break;
  case arith::CmpIPredicate::ult:
    steps = arith::CeilDivUIOp::create(b, loc, span, step);
    more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                 counted.bound, counted.lb);
    break;
  default:
    steps = arith::DivUIOp::create(b, loc, span, step);
    more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 counted.bound, counted.lb);
    break;
  }
  // Testing the new counter, the body runs once more than the steps that
  // pass the test after the first (at least once); testing the old one,
  // once more than the steps that pass it.
  Value count;
  if (counted.testsOld) {
    Value zero =
        arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 0));
    count = arith::AddIOp::create(
        b, loc, arith::SelectOp::create(b, loc, more, steps, zero), one);
  } else {
    count = arith::SelectOp::create(b, loc, more, steps, one);
  }
  replaceWithFor(loop, count);
}

/// The parts of a halving do-while: `for (s = s0; s > 0; s >>= 1)`.
struct HalvingWhile {
  unsigned counter; // position of the halved value among the loop values
  Value first;      // its initial value
  bool positiveOnly; // a signed halving or test: s0 <= 0 runs once
};

/// True if `next` is `iv` halved: shrui/shrsi by 1, divui/divsi by 2; sets
/// `isSigned` for the signed ones.
bool isHalving(Value next, Value iv, bool &isSigned) {
  Operation *def = next.getDefiningOp();
  if (!def || def->getNumOperands() != 2 || def->getOperand(0) != iv)
    return false;
  std::optional<int64_t> by = getConstantIntValue(def->getOperand(1));
  if (!by)
    return false;
  isSigned = isa<arith::ShRSIOp, arith::DivSIOp>(def);
  return (isa<arith::ShRUIOp, arith::ShRSIOp>(def) && *by == 1) ||
         (isa<arith::DivUIOp, arith::DivSIOp>(def) && *by == 2);
}

std::optional<HalvingWhile> matchHalving(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  scf::ConditionOp condition = loop.getConditionOp();
  arith::CmpIOp cmp = getDoWhileTest(loop);
  std::optional<int64_t> bound =
      cmp ? getConstantIntValue(cmp.getRhs()) : std::nullopt;
  if (!bound)
    return std::nullopt;
  using P = arith::CmpIPredicate;
  P p = cmp.getPredicate();
  for (auto [k, next] : llvm::enumerate(condition.getArgs())) {
    Value iv = before.getArgument(k);
    bool signedOp = false;
    if (!isa<IntegerType, IndexType>(iv.getType()) ||
        !isHalving(next, iv, signedOp))
      continue;
    // The halved value is positive (s > 0 after the step), or the old one
    // was at least 2.
    bool testsNext = cmp.getLhs() == next && *bound == 0 &&
                     (p == P::sgt || (!signedOp && (p == P::ne || p == P::ugt)));
    bool testsOld =
        cmp.getLhs() == iv &&
        ((*bound == 1 && (p == P::sgt || (!signedOp && p == P::ugt))) ||
         (*bound == 2 && (p == P::sge || (!signedOp && p == P::uge))));
    if (!testsNext && !testsOld)
      continue;
    bool signedTest = p == P::sgt || p == P::sge;
    return HalvingWhile{unsigned(k), loop.getInits()[k],
                        signedOp || (testsOld && signedTest)};
  }
  return std::nullopt;
}

/// The number of bits of `x` up to its highest set one (0 for 0), with
/// compares and selects (every target lowers them).
Value bitLength(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v));
  };
  Value length = constant(0);
  for (unsigned shift = llvm::PowerOf2Ceil(width) / 2; shift > 0; shift /= 2) {
    if (shift >= width)
      continue;
    Value big = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, x,
                                      constant(int64_t(1) << shift));
    length = arith::SelectOp::create(
        b, loc, big, arith::AddIOp::create(b, loc, length, constant(shift)),
        length);
    x = arith::SelectOp::create(
        b, loc, big, arith::ShRUIOp::create(b, loc, x, constant(shift)), x);
  }
  Value nonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                        constant(0));
  return arith::AddIOp::create(
      b, loc, length, arith::SelectOp::create(b, loc, nonZero, constant(1),
                                              constant(0)));
}

void rewriteHalving(scf::WhileOp loop, const HalvingWhile &halving) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value first = halving.first;
  Type type = first.getType();
  Value one = arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1));
  Value zero =
      arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 0));
  // s0, s0 / 2, ..., 1: the bits of s0; the body runs at least once.
  Value count = arith::MaxUIOp::create(b, loc, bitLength(b, loc, first), one);
  if (halving.positiveOnly)
    count = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, first, zero),
        count, one);
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  scf::ForOp forOp = replaceWithFor(loop, count);
  // A static bound (the halvings of the type's bits) lets the loop be taped
  // in private memory; the counter is marked for the reduction-tree
  // strategy.
  forOp->setAttr(kMaxTripCountAttrName,
                 b.getI64IntegerAttr(std::max(1u, width)));
  forOp->setAttr(kHalvingCounterAttrName,
                 b.getI64IntegerAttr(halving.counter));
}

/// Replaces `loop` (forwarding after region) with an scf.for of `count`
/// iterations running its before region and carrying its values.
scf::ForOp replaceWithFor(scf::WhileOp loop, Value count) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  if (!count.getType().isIndex())
    count = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), count);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value unit = arith::ConstantIndexOp::create(b, loc, 1);
  auto forOp = scf::ForOp::create(b, loc, zero, count, unit, loop.getInits());
  Block *body = forOp.getBody();
  // Without iter_args the builder adds a terminator.
  if (!body->empty())
    body->back().erase();
  IRMapping mapping;
  Block &before = loop.getBefore().front();
  for (auto [arg, carried] :
       llvm::zip(before.getArguments(), forOp.getRegionIterArgs()))
    mapping.map(arg, carried);
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  for (Operation &op : before.without_terminator())
    inner.clone(op, mapping);
  SmallVector<Value> next;
  for (Value v : loop.getConditionOp().getArgs())
    next.push_back(mapping.lookupOrDefault(v));
  scf::YieldOp::create(inner, loc, next);
  loop.replaceAllUsesWith(forOp.getResults());
  loop.erase();
  return forOp;
}

} // namespace

void nabla::countWhileLoops(func::FuncOp function) {
  SmallVector<scf::WhileOp> loops;
  function.walk([&](scf::WhileOp loop) { loops.push_back(loop); });
  for (scf::WhileOp loop : loops) {
    if (std::optional<CountedWhile> counted = match(loop))
      rewrite(loop, *counted);
    else if (std::optional<HalvingWhile> halving = matchHalving(loop))
      rewriteHalving(loop, *halving);
  }
}
