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
// evaluation of the tape's formula (TapeSize.cpp) sees the same.
//
//===----------------------------------------------------------------------===//

#include "ActivityAnalysis.h"
#include "ReverseEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

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
