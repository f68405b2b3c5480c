//===- LoopWhileTape.cpp - While loops reversed with a growing tape -------===//
//
// An scf.while whose exit depends on data (`while (change > tol)`) and whose
// iterations read memory that it or later code overwrites can neither be
// taped by a trip count known at the entry nor checkpointed (recomputation
// would read the overwritten values). Its values go to slots of the
// kernel's global-memory tape anyway, `nabla.tape_capacity` slots per thread:
// step k — the k-th execution of the before region, and of the after region
// when the loop goes on — stores what the reverse sweep needs into slot k
// while k is below the capacity. A thread that runs more steps stores no
// more, reports how many it needed (`nabla.tape_overflow`), and its adjoints
// through the loop are NaN; the launcher, which wrote the capacity, reads the
// report and runs the kernel again from its inputs with the capacity needed
// (Runtime.md). The reverse sweep runs the steps backwards, reloading each
// from its slot. Inside loops taped in global memory (for or while), each of
// their iterations has the capacity's slots and one for the step count;
// loops inside the while are taped per step of it.
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

using namespace mlir;
using namespace nabla;

LogicalResult WhileTapeStrategy::forward(VJPEmitter &, scf::ForOp op) {
  return op.emitOpError("is not an scf.while (internal error)");
}

LogicalResult WhileTapeStrategy::reverse(VJPEmitter &, scf::ForOp op,
                                         AdjointScope &) {
  return op.emitOpError("is not an scf.while (internal error)");
}

void WhileTapeStrategy::remark(Operation *loop, int64_t) const {
  int64_t perStep = 0;
  for (const SmallVector<Value> *values : {&beforeTaped, &afterTaped})
    for (Value v : *values)
      perStep += tapeSlotBytes(v.getType(), /*global=*/true);
  loop->emitRemark()
      << "loop reversed with a growing global-memory tape of " << perStep
      << " bytes per step and thread, nabla.tape_capacity steps per thread"
      << (nested ? " and iteration of the taped loops around it" : "")
      << " (its reads are overwritten, so it cannot be recomputed from "
         "checkpoints, and its trip count is known only as it runs: the "
         "launcher raises the capacity when a thread needs more)";
}

std::unique_ptr<WhileTapeStrategy> VJPEmitter::planWhileTape(scf::WhileOp op) {
  // Slots at the entry, `capacity` per step of each enclosing taped loop's
  // iterations: not while recomputing a checkpointed loop, nor inside a
  // loop that is not taped (forwardIterations counts the taped ones).
  if (recomputeRoot)
    return nullptr;
  unsigned enclosing = 0;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<scf::ForOp, scf::WhileOp>(parent))
      ++enclosing;
  if (enclosing != forwardIterations.size())
    return nullptr;
  auto tape = std::make_unique<WhileTapeStrategy>();
  tape->nested = enclosing != 0;
  llvm::append_range(tape->beforeTaped, op.getBeforeArguments());
  collectTapedOps(op.getBefore().front(), tape->beforeTaped,
                  tape->beforeRecomputed);
  collectTapedOps(op.getAfter().front(), tape->afterTaped,
                  tape->afterRecomputed);
  return tape;
}

LogicalResult VJPEmitter::forwardTapedWhile(scf::WhileOp op,
                                            WhileTapeStrategy &tape) {
  Location loc = op.getLoc();
  // scf.if's results are taped like any value, loops inside are taped per
  // step; other region ops have no tape form.
  if (Operation *unsupported = findUntapeableRegion(op))
    return unsupported->emitOpError(
        "is a region op on an active path inside a while loop taped in "
        "global memory, which reverse mode does not support (scf.if, scf.for "
        "and scf.while are)");
  // Inside taped loops, each of their iterations has `capacity` slots (and
  // one for the while's step count, which their reverse cannot get else).
  bool nested = !forwardIterations.empty();
  SlotCount enclosing = nested ? forwardIterations.back().second : SlotCount();
  {
    OpBuilder::InsertionGuard guard(b);
    setInsertionPointAtEntry();
    tape.capacity = TapeCapacityOp::create(b, loc, b.getIndexType());
    Value count = tape.capacity;
    if (nested) {
      Value outer = materializeCount(loc, enclosing);
      count = arith::MulIOp::create(b, loc, outer, tape.capacity);
      tape.countSlots = createGlobalSlots(b, loc, b.getIndexType(), outer);
    }
    tape.stepSlots = count;
    hoistAnchor = count.getDefiningOp();
    if (tape.countSlots)
      hoistAnchor = tape.countSlots.getDefiningOp();
    tape.tapes.clear();
    for (const SmallVector<Value> *values :
         {&tape.beforeTaped, &tape.afterTaped})
      for (Value v : *values) {
        Value slots = createGlobalSlots(b, loc, v.getType(), count);
        if (!slots)
          return op->emitOpError("defines a value of type ")
                 << v.getType() << ", which a loop tape cannot hold";
        tape.tapes.push_back({v, slots});
        hoistAnchor = slots.getDefiningOp();
      }
  }
  SlotCount perExecution{1, tape.capacity};
  auto slotsOf = [&](Value v) {
    for (auto [src, slots] : tape.tapes)
      if (src == v)
        return slots;
    return Value();
  };
  // Stores `values` at `step` while it is below the capacity.
  auto store = [&](ArrayRef<Value> values, Value step) {
    if (values.empty())
      return;
    OpBuilder::InsertionGuard guard(b);
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, step,
                                       tape.capacity);
    auto guarded = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/false);
    b.setInsertionPointToStart(guarded.thenBlock());
    Value slot = linearize(loc, forwardIterations, step, perExecution);
    for (Value v : values)
      storePrivateSlot(b, loc, fwd.lookup(v), slotsOf(v), slot);
  };

  // The primal while again, counting the executions of its after region.
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto [loop, before, after] = createCountingWhile(op);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(before);
    fwd.map(op.getBeforeArguments(), before->getArguments().drop_back());
    Value step = before->getArguments().back();
    // Region values are taped, not cached by enclosing regions; loops in
    // them are taped per step.
    SlotCount steps{1, tape.stepSlots};
    forwardIterations.push_back(
        {linearize(loc, forwardIterations, step, perExecution), steps});
    branchScopes.emplace_back();
    LogicalResult beforeResult = forwardBlock(op.getBefore().front());
    branchScopes.pop_back();
    forwardIterations.pop_back();
    if (failed(beforeResult))
      return failure();
    store(tape.beforeTaped, step);
    scf::ConditionOp condition = op.getConditionOp();
    SmallVector<Value> passed = mapped(condition.getArgs());
    passed.push_back(step);
    scf::ConditionOp::create(b, loc, fwd.lookup(condition.getCondition()),
                             passed);

    b.setInsertionPointToEnd(after);
    fwd.map(op.getAfterArguments(), after->getArguments().drop_back());
    step = after->getArguments().back();
    forwardIterations.push_back(
        {linearize(loc, forwardIterations, step, perExecution), steps});
    branchScopes.emplace_back();
    LogicalResult afterResult = forwardBlock(op.getAfter().front());
    branchScopes.pop_back();
    forwardIterations.pop_back();
    if (failed(afterResult))
      return failure();
    store(tape.afterTaped, step);
    auto yield = cast<scf::YieldOp>(op.getAfter().front().getTerminator());
    SmallVector<Value> yielded = mapped(yield.getOperands());
    yielded.push_back(arith::AddIOp::create(b, loc, step, one));
    scf::YieldOp::create(b, loc, yielded);
  }
  for (auto [src, dst] : llvm::zip(op.getResults(), loop.getResults()))
    defined(src, dst);
  Value iterations = loop.getResults().back();
  if (nested)
    storePrivateSlot(b, loc, iterations, tape.countSlots,
                     forwardIterations.back().first);
  // N + 1 steps: report a thread that needed more slots than it had.
  Value steps = arith::AddIOp::create(b, loc, iterations, one);
  Value over = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, steps,
                                     tape.capacity);
  {
    OpBuilder::InsertionGuard guard(b);
    auto report = scf::IfOp::create(b, loc, over, /*withElseRegion=*/false);
    b.setInsertionPointToStart(report.thenBlock());
    TapeOverflowOp::create(b, loc, steps);
  }
  // Outside every loop, the count reaches the reverse sweep as a value the
  // regions around cache (inside taped loops it is in countSlots).
  if (nested)
    return success();
  OpBuilder keys(b.getContext());
  keys.setInsertionPointToEnd(&countKeys);
  Value key = UnrealizedConversionCastOp::create(
                  keys, loc, TypeRange{b.getIndexType()}, ValueRange{})
                  .getResult(0);
  whileCounts[op] = key;
  defined(key, iterations);
  return success();
}

/// `value` where `poison` holds NaN (float values; others unchanged).
static Value nanIf(OpBuilder &b, Location loc, Value poison, Value value) {
  auto type = dyn_cast<FloatType>(value.getType());
  if (!type)
    return value;
  Value nan = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type, APFloat::getNaN(type.getFloatSemantics())));
  return arith::SelectOp::create(b, loc, poison, nan, value);
}

LogicalResult VJPEmitter::reverseTapedWhile(scf::WhileOp op,
                                            const WhileTapeStrategy &tape,
                                            AdjointScope &outer) {
  Location loc = op.getLoc();
  Block &before = op.getBefore().front();
  Block &after = op.getAfter().front();
  scf::ConditionOp condition = op.getConditionOp();
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  // Inside taped loops, the step count of this iteration of theirs.
  Value iterations =
      tape.countSlots
          ? loadPrivateSlot(b, loc, tape.countSlots,
                            reverseIterations.back().first, b.getIndexType())
          : fwd.lookup(whileCounts[op]);
  SlotCount perExecution{1, tape.capacity};
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value steps = arith::AddIOp::create(b, loc, iterations, one);
  // A thread whose steps did not fit reverses none: NaN adjoints.
  Value over = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, steps,
                                     tape.capacity);
  Value count = arith::SelectOp::create(b, loc, over, zero, steps);
  SmallVector<unsigned> carried;
  for (auto [i, arg] : llvm::enumerate(op.getBeforeArguments()))
    if (act.isVaried(arg))
      carried.push_back(i);
  SmallVector<Value> outside = usedFromOutside(op);
  SmallVector<Value> seeds;
  for (Value r : op.getResults()) {
    Value d = outer.get(r);
    seeds.push_back(d ? d : createZero(b, loc, r.getType()));
  }
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (unsigned i : carried) {
    Type type = op.getBeforeArguments()[i].getType();
    inits.push_back(createZero(b, loc, type));
    types.push_back(type);
  }
  for (Value o : outside) {
    inits.push_back(createZero(b, loc, o.getType()));
    types.push_back(o.getType());
  }
  auto slotsOf = [&](Value v) {
    for (auto [src, slots] : tape.tapes)
      if (src == v)
        return slots;
    return Value();
  };

  auto loop = scf::ForOp::create(b, loc, zero, count, one, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    clearTerminator(*body);
    b.setInsertionPointToEnd(body);
    Value step =
        arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, count, one),
                              loop.getInductionVar());
    ValueRange carriedIn = loop.getRegionIterArgs();
    Value final = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, step,
                                        iterations);
    auto branch = scf::IfOp::create(b, loc, types, final,
                                    /*withElseRegion=*/true);
    for (int k = 0; k < 2; ++k) {
      bool withAfter = k == 1;
      OpBuilder::InsertionGuard branchGuard(b);
      Block *block = k == 0 ? branch.thenBlock() : branch.elseBlock();
      clearTerminator(*block);
      b.setInsertionPointToEnd(block);
      SmallVector<std::pair<Value, Value>> saved;
      Value slot = linearize(loc, reverseIterations, step, perExecution);
      // Loops in the regions find this step's slot.
      reverseIterations.push_back({slot, SlotCount()});
      auto reload = [&](ArrayRef<Value> values,
                        ArrayRef<Operation *> recomputed) {
        for (Value v : values) {
          saved.push_back({v, fwd.lookupOrNull(v)});
          fwd.map(v, loadPrivateSlot(b, loc, slotsOf(v), slot, v.getType()));
        }
        for (Operation *op : recomputed) {
          for (Value r : op->getResults())
            saved.push_back({r, fwd.lookupOrNull(r)});
          b.clone(*op, fwd);
        }
      };
      reload(tape.beforeTaped, tape.beforeRecomputed);
      AdjointScope scope;
      for (auto [j, o] : llvm::enumerate(outside))
        scope.adjoints[o] = carriedIn[carried.size() + j];
      if (withAfter) {
        for (auto [arg, passed] :
             llvm::zip(op.getAfterArguments(), condition.getArgs())) {
          saved.push_back({arg, fwd.lookupOrNull(arg)});
          fwd.map(arg, fwd.lookup(passed));
        }
        reload(tape.afterTaped, tape.afterRecomputed);
        for (auto [j, i] : llvm::enumerate(carried))
          if (act.isVaried(yield.getOperand(i)))
            scope.add(b, loc, yield.getOperand(i), carriedIn[j]);
        if (failed(reverseBlock(after, scope)))
          return failure();
        for (auto [passed, arg] :
             llvm::zip(condition.getArgs(), op.getAfterArguments()))
          if (act.isVaried(passed))
            if (Value d = scope.get(arg))
              scope.add(b, loc, passed, d);
      } else {
        for (auto [passed, seed] : llvm::zip(condition.getArgs(), seeds))
          if (act.isVaried(passed))
            scope.add(b, loc, passed, seed);
      }
      if (failed(reverseBlock(before, scope)))
        return failure();
      SmallVector<Value> yields;
      for (unsigned i : carried) {
        Value arg = op.getBeforeArguments()[i];
        Value d = scope.get(arg);
        yields.push_back(d ? d : createZero(b, loc, arg.getType()));
      }
      for (Value o : outside) {
        Value d = scope.get(o);
        yields.push_back(d ? d : createZero(b, loc, o.getType()));
      }
      scf::YieldOp::create(b, loc, yields);
      reverseIterations.pop_back();
      for (auto [src, old] : llvm::reverse(saved)) {
        if (old)
          fwd.map(src, old);
        else
          fwd.erase(src);
      }
    }
    scf::YieldOp::create(b, loc, branch.getResults());
  }
  for (auto [k, i] : llvm::enumerate(carried))
    if (act.isVaried(op.getInits()[i]))
      outer.add(b, loc, op.getInits()[i],
                nanIf(b, loc, over, loop.getResult(k)));
  for (auto [k, o] : llvm::enumerate(outside))
    outer.add(b, loc, o,
              nanIf(b, loc, over, loop.getResult(carried.size() + k)));
  return success();
}
