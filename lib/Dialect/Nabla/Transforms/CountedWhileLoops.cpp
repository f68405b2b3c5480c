//===- CountedWhileLoops.cpp - Do-while loops with a counter as scf.for ---===//
//
// See CountedWhileLoops.h.
//
//===----------------------------------------------------------------------===//

#include "CountedWhileLoops.h"

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
  int64_t step;          // its increment
  arith::CmpIPredicate predicate; // ne, slt or ult (counter on the left)
  bool testsOld;         // the test reads the counter before its increment
};

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

std::optional<CountedWhile> match(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  Block &after = loop.getAfter().front();
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  if (&after.front() != yield.getOperation() ||
      yield.getOperands() != ValueRange(after.getArguments()))
    return std::nullopt;
  scf::ConditionOp condition = loop.getConditionOp();
  if (condition.getArgs().getTypes() != before.getArgumentTypes())
    return std::nullopt;
  auto cmp = condition.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp->getBlock() != &before)
    return std::nullopt;
  for (auto [k, next] : llvm::enumerate(condition.getArgs())) {
    auto add = next.getDefiningOp<arith::AddIOp>();
    if (!add)
      continue;
    Value iv = before.getArgument(k);
    Value other = add.getLhs() == iv ? add.getRhs()
                  : add.getRhs() == iv ? add.getLhs()
                                       : Value();
    std::optional<int64_t> step = other ? getConstantIntValue(other)
                                        : std::nullopt;
    if (!step || *step <= 0)
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
    return CountedWhile{unsigned(k), loop.getInits()[k], bound, *step,
                        predicate, testsOld};
  }
  return std::nullopt;
}

void rewrite(scf::WhileOp loop, const CountedWhile &counted) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Type type = counted.lb.getType();
  Value step = arith::ConstantOp::create(b, loc, type,
                                         b.getIntegerAttr(type, counted.step));
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
  if (!type.isIndex())
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
}

} // namespace

void nabla::countWhileLoops(func::FuncOp function) {
  SmallVector<scf::WhileOp> loops;
  function.walk([&](scf::WhileOp loop) { loops.push_back(loop); });
  for (scf::WhileOp loop : loops)
    if (std::optional<CountedWhile> counted = match(loop))
      rewrite(loop, *counted);
}
