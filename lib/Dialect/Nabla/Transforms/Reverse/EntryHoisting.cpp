//===- EntryHoisting.cpp - Values recomputed at the derivative's entry ----===//
//
// A global-memory tape is sized before the launch and laid out from the
// derivative function's entry, so the trip counts of the loops it holds are
// recomputed there: from the function's arguments and constants through pure
// ops, and from elements of buffers the primal never writes (the offsets of
// ragged rows, `for (j = offs[row]; j < offs[row + 1]; ++j)`). Such a read
// is guarded by the conditions under which the primal reads (`if (row <
// rows)`, an enclosing loop running at all), recomputed at the entry: where
// the primal does not read, neither does the entry, and the value is 0 —
// a thread that does not run the loop needs no slots, and the launcher's
// evaluation of the tape's formula (TapeSize.cpp) sees the same. A loop
// whose bounds depend on the loops around it (a triangular nest) is sized
// by its largest trip count over their iterations (maxTripCountAtEntry).
//
//===----------------------------------------------------------------------===//

#include "ActivityAnalysis.h"
#include "ReverseEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace nabla;

void VJPEmitter::setInsertionPointAtEntry() {
  if (hoistAnchor)
    b.setInsertionPointAfter(hoistAnchor);
  else
    b.setInsertionPointToStart(entry);
}

Value VJPEmitter::hoistReadOnlyLoad(memref::LoadOp load) {
  if (load.getIndices().size() != 1 || !load.getType().isSignlessInteger())
    return {};
  auto buffer = dyn_cast<BlockArgument>(load.getMemRef());
  if (!buffer || buffer.getOwner() != entry || !primalBody)
    return {};
  // The primal's own argument: it must be one nothing writes.
  BlockArgument primalArg;
  for (BlockArgument arg : primalBody->getArguments())
    if (fwd.lookupOrNull(arg) == buffer)
      primalArg = arg;
  if (!primalArg || !isNeverWritten(primalArg))
    return {};
  // The primal's read: where it sits says when it happens (the forward
  // sweep may still be building the regions around `load`).
  memref::LoadOp primalLoad;
  primalBody->getParent()->walk([&](memref::LoadOp candidate) {
    if (fwd.lookupOrNull(candidate.getResult()) == load.getResult())
      primalLoad = candidate;
  });
  if (!primalLoad)
    return {};
  Value index = hoistToEntry(load.getIndices()[0]);
  Value executes = pathCondition(primalLoad);
  if (!index || !executes)
    return {};
  OpBuilder::InsertionGuard guard(b);
  setInsertionPointAtEntry();
  Location loc = load.getLoc();
  auto read = scf::IfOp::create(b, loc, load.getType(), executes,
                                /*withElseRegion=*/true);
  b.setInsertionPointToStart(read.thenBlock());
  scf::YieldOp::create(
      b, loc, memref::LoadOp::create(b, loc, buffer, index).getResult());
  b.setInsertionPointToStart(read.elseBlock());
  scf::YieldOp::create(
      b, loc,
      arith::ConstantOp::create(b, loc, b.getZeroAttr(load.getType()))
          .getResult());
  hoistAnchor = read;
  hoisted[load.getResult()] = read.getResult(0);
  return read.getResult(0);
}

Value VJPEmitter::pathCondition(Operation *op) {
  OpBuilder::InsertionGuard guard(b);
  Value condition;
  auto conjoin = [&](Value more) {
    if (!condition) {
      condition = more;
      return;
    }
    setInsertionPointAtEntry();
    condition = arith::AndIOp::create(b, more.getLoc(), condition, more);
    hoistAnchor = condition.getDefiningOp();
  };
  Operation *function = primalBody->getParentOp();
  for (Operation *parent = op->getParentOp(); parent != function;
       parent = parent->getParentOp()) {
    if (!parent)
      return {};
    if (auto choice = dyn_cast<scf::IfOp>(parent)) {
      Value taken = hoistToEntry(fwd.lookupOrNull(choice.getCondition()));
      if (!taken)
        return {};
      if (choice.getElseRegion().isAncestor(op->getParentRegion())) {
        setInsertionPointAtEntry();
        Value one = arith::ConstantIntOp::create(b, taken.getLoc(), 1, 1);
        taken = arith::XOrIOp::create(b, taken.getLoc(), taken, one);
        hoistAnchor = taken.getDefiningOp();
      }
      conjoin(taken);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      Value lb = hoistToEntry(fwd.lookupOrNull(loop.getLowerBound()));
      Value ub = hoistToEntry(fwd.lookupOrNull(loop.getUpperBound()));
      if (!lb || !ub)
        return {};
      setInsertionPointAtEntry();
      Value runs = arith::CmpIOp::create(b, loop.getLoc(),
                                         arith::CmpIPredicate::slt, lb, ub);
      hoistAnchor = runs.getDefiningOp();
      conjoin(runs);
      continue;
    }
    return {};
  }
  if (condition)
    return condition;
  setInsertionPointAtEntry();
  Value always = arith::ConstantIntOp::create(b, op->getLoc(), 1, 1);
  hoistAnchor = always.getDefiningOp();
  return always;
}

Value VJPEmitter::hoistToEntry(Value value) {
  if (!value)
    return {};
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == entry ? value : Value();
  if (Value known = hoisted.lookup(value))
    return known;
  Operation *op = value.getDefiningOp();
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return hoistReadOnlyLoad(load);
  // A value an scf.if chooses (clang's prologue of an unrolled loop picks
  // where the main loop starts): the select of what its branches yield.
  if (auto choice = dyn_cast<scf::IfOp>(op)) {
    if (choice.getElseRegion().empty())
      return {};
    unsigned k = cast<OpResult>(value).getResultNumber();
    Value condition = hoistToEntry(choice.getCondition());
    Value then =
        condition ? hoistToEntry(choice.thenYield().getOperand(k)) : Value();
    Value otherwise =
        then ? hoistToEntry(choice.elseYield().getOperand(k)) : Value();
    if (!otherwise)
      return {};
    OpBuilder::InsertionGuard guard(b);
    setInsertionPointAtEntry();
    auto select =
        arith::SelectOp::create(b, choice.getLoc(), condition, then, otherwise);
    hoistAnchor = select;
    hoisted[value] = select.getResult();
    return select.getResult();
  }
  if (op->getNumRegions() || !isMemoryEffectFree(op) ||
      op->getNumResults() != 1)
    return {};
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    Value at = hoistToEntry(operand);
    if (!at)
      return {};
    mapping.map(operand, at);
  }
  OpBuilder::InsertionGuard guard(b);
  setInsertionPointAtEntry();
  Operation *clone = b.clone(*op, mapping);
  hoistAnchor = clone;
  hoisted[value] = clone->getResult(0);
  return clone->getResult(0);
}

Value VJPEmitter::hoistAt(Value value, const IRMapping &at) {
  if (Value substituted = at.lookupOrNull(value))
    return substituted;
  if (isa<BlockArgument>(value))
    return hoistToEntry(fwd.lookupOrNull(value));
  // Defined outside the loops `at` substitutes: known to the forward sweep.
  if (Value known = fwd.lookupOrNull(value))
    if (Value invariant = hoistToEntry(known))
      return invariant;
  Operation *op = value.getDefiningOp();
  if (op->getNumRegions() || !isMemoryEffectFree(op) ||
      op->getNumResults() != 1)
    return {};
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    Value hoistedOperand = hoistAt(operand, at);
    if (!hoistedOperand)
      return {};
    mapping.map(operand, hoistedOperand);
  }
  OpBuilder::InsertionGuard guard(b);
  setInsertionPointAtEntry();
  Operation *clone = b.clone(*op, mapping);
  hoistAnchor = clone;
  return clone->getResult(0);
}

/// `value` (an integer or index) as `type`: sign-extended or truncated.
static Value castInteger(OpBuilder &b, Location loc, Value value, Type type) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (from.isIndex() || type.isIndex())
    return arith::IndexCastOp::create(b, loc, type, value);
  if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, type, value);
  return arith::TruncIOp::create(b, loc, type, value);
}

namespace {
/// A loop around a trip count's bounds, as the bounds see it: its induction
/// variable and the counters it carries (`i` of a rotated `for (i = a; ...;
/// i += c)`, an iter_arg advanced by a value from outside each iteration).
struct EnclosingLoop {
  scf::ForOp loop;
  /// iter_arg → its step (the init is the loop's operand).
  SmallVector<std::pair<BlockArgument, Value>> counters;
};
} // namespace

/// The value `arg` (an iter_arg of `loop`) advances by each iteration when
/// the loop yields `arg + c` (also through clang's guarded early-exit form:
/// an scf.if yielding `arg + c` while running and `arg` after the exit), c
/// defined outside the loop; null otherwise.
static Value counterStep(scf::ForOp loop, BlockArgument arg) {
  unsigned k = arg.getArgNumber() - 1;
  Value next = loop.getBody()->getTerminator()->getOperand(k);
  if (auto guard = next.getDefiningOp<scf::IfOp>()) {
    unsigned r = cast<OpResult>(next).getResultNumber();
    if (guard.getElseRegion().empty() || guard.elseYield().getOperand(r) != arg)
      return {};
    next = guard.thenYield().getOperand(r);
  }
  auto add = next.getDefiningOp<arith::AddIOp>();
  if (!add)
    return {};
  Value step = add.getLhs() == arg   ? add.getRhs()
               : add.getRhs() == arg ? add.getLhs()
                                     : Value();
  if (!step || loop.getBodyRegion().isAncestor(step.getParentRegion()))
    return {};
  return step;
}

/// Collects the loops whose induction variables or counters `value` (a
/// primal value) depends on, and those their bounds and counters' inits
/// depend on, each after the ones it uses (outermost first). False when it
/// depends on another region's value.
static bool collectEnclosingLoops(Value value,
                                  SmallVectorImpl<EnclosingLoop> &loops,
                                  DenseSet<Value> &seen, Operation *function) {
  if (!seen.insert(value).second)
    return true;
  auto visitLoop = [&](scf::ForOp loop, BlockArgument counter,
                       Value step) -> bool {
    for (Value bound :
         {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
      if (!collectEnclosingLoops(bound, loops, seen, function))
        return false;
    if (counter) {
      Value init = loop.getInitArgs()[counter.getArgNumber() - 1];
      if (!collectEnclosingLoops(init, loops, seen, function) ||
          !collectEnclosingLoops(step, loops, seen, function))
        return false;
    }
    auto known = llvm::find_if(
        loops, [&](const EnclosingLoop &l) { return l.loop == loop; });
    if (known == loops.end()) {
      loops.push_back({loop, {}});
      known = std::prev(loops.end());
    }
    if (counter)
      known->counters.push_back({counter, step});
    return true;
  };
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (owner == function)
      return true;
    auto loop = dyn_cast<scf::ForOp>(owner);
    if (!loop)
      return false;
    if (arg == loop.getInductionVar())
      return visitLoop(loop, {}, {});
    Value step = counterStep(loop, arg);
    return step && visitLoop(loop, arg, step);
  }
  Operation *op = value.getDefiningOp();
  if (op->getNumRegions())
    return false;
  for (Value operand : op->getOperands())
    if (!collectEnclosingLoops(operand, loops, seen, function))
      return false;
  return true;
}

Value VJPEmitter::maxTripCountAtEntry(scf::ForOp op) {
  Location loc = op.getLoc();
  SmallVector<EnclosingLoop> loops;
  DenseSet<Value> seen;
  Operation *function = primalBody->getParentOp();
  for (Value bound : {op.getLowerBound(), op.getUpperBound(), op.getStep()})
    if (!collectEnclosingLoops(bound, loops, seen, function))
      return {};
  // 2^depth corners; deeper nests than this are not worth their code.
  if (loops.empty() || loops.size() > 3)
    return {};
  // The bounds are usually affine in the enclosing loops' positions (a
  // triangular nest), so the trip count is monotone in each and largest at
  // a corner of the box of their ranges: each loop at its first or last
  // position. The forward sweep checks the count against it anyway.
  SmallVector<Value> counts;
  IRMapping at;
  std::function<bool(unsigned)> visit = [&](unsigned k) -> bool {
    OpBuilder::InsertionGuard guard(b);
    if (k == loops.size()) {
      Value first = hoistAt(op.getLowerBound(), at);
      Value end = hoistAt(op.getUpperBound(), at);
      Value step = hoistAt(op.getStep(), at);
      if (!first || !end || !step)
        return false;
      setInsertionPointAtEntry();
      counts.push_back(emitTripCount(loc, first, end, step));
      hoistAnchor = counts.back().getDefiningOp();
      return true;
    }
    scf::ForOp loop = loops[k].loop;
    Value first = hoistAt(loop.getLowerBound(), at);
    Value end = hoistAt(loop.getUpperBound(), at);
    Value step = hoistAt(loop.getStep(), at);
    if (!first || !end || !step)
      return false;
    SmallVector<Value> inits, steps;
    for (auto [counter, advance] : loops[k].counters) {
      inits.push_back(
          hoistAt(loop.getInitArgs()[counter.getArgNumber() - 1], at));
      steps.push_back(hoistAt(advance, at));
      if (!inits.back() || !steps.back())
        return false;
    }
    setInsertionPointAtEntry();
    Value one =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(end.getType(), 1));
    Value last = arith::SubIOp::create(b, loc, end, one);
    for (Value position : {first, last}) {
      at.map(loop.getInductionVar(), position);
      // The counters after (position - first) / step iterations.
      Value done = arith::DivSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, position, first), step);
      for (auto [j, counter] : llvm::enumerate(loops[k].counters)) {
        Value times = castInteger(b, loc, done, counter.first.getType());
        at.map(counter.first,
               arith::AddIOp::create(
                   b, loc, inits[j],
                   arith::MulIOp::create(b, loc, times, steps[j])));
      }
      hoistAnchor = b.getInsertionPoint() == b.getBlock()->end()
                        ? &b.getBlock()->back()
                        : &*std::prev(b.getInsertionPoint());
      if (!visit(k + 1))
        return false;
      setInsertionPointAtEntry();
    }
    return true;
  };
  if (!visit(0))
    return {};
  OpBuilder::InsertionGuard guard(b);
  setInsertionPointAtEntry();
  Value largest = counts.front();
  for (Value count : ArrayRef(counts).drop_front())
    largest = arith::MaxUIOp::create(b, loc, largest, count);
  hoistAnchor = largest.getDefiningOp();
  return largest;
}
