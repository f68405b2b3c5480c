//===- LoopCheckpointing.cpp - Reversing loops by binomial checkpointing --===//
//
// The checkpoint strategy, for scf.for and scf.while alike: a loop is seen
// as N steps over a state (the iter_args, or a while's before-arguments).
// The reverse sweep starts from the initial state, which the forward sweep
// keeps like any value, and runs revolve's schedule with K snapshots in
// private memory: from the latest snapshot below the last step not yet
// reversed, it advances (recomputing primal steps with their writes to
// outside memory skipped), taking a snapshot at binomially chosen positions
// while snapshots are free; then it reverses that one step with a local
// forward and reverse sweep of the body (nested loops and branches are
// cached locally, so every nesting level needs only its own snapshots), and
// frees the snapshot the step started from once nothing above it is left.
//
// With r the smallest integer such that C(K + r, K) ≥ N, each step is
// recomputed at most r times (revolve's bound: r·N − C(K + r, r − 1) forward
// steps; ours adds the first sweep, at most N more, because the forward
// sweep cannot keep snapshots for a reverse sweep that runs after every
// region has closed). Memory: K · (state + 8) bytes per thread, static.
//
// The schedule depends only on N and K, so when N is uniform (which the
// primal needs anyway for a loop holding a barrier or a collective) every
// thread runs the same steps and replayed barriers stay convergent.
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace nabla;

/// The adjoints in `scope` of the carried entries of `args` (zero where
/// none was accumulated).
static SmallVector<Value> carriedAdjoints(OpBuilder &b, Location loc,
                                          const AdjointScope &scope,
                                          ValueRange args,
                                          ArrayRef<unsigned> carried) {
  return llvm::map_to_vector(carried, [&](unsigned i) {
    Value d = scope.get(args[i]);
    return d ? d : createZero(b, loc, args[i].getType());
  });
}

/// The offset from `pos` of revolve's next snapshot when `n` ≥ 2 steps are
/// left to reverse with `free` ≥ 1 snapshots: with r minimal such that
/// β(free, r) = C(free + r, r) ≥ n, the right part keeps
/// β(free − 1, r) = β(free, r) · free / (free + r) steps, the left part the
/// rest (at least 1), so that no step is advanced more than r times.
static Value emitSnapshotOffset(OpBuilder &b, Location loc, Value n,
                                Value free) {
  Type index = b.getIndexType();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  // A loop that never runs for free = 0 (its result is not used then).
  Value s = arith::MaxUIOp::create(b, loc, free, one);
  auto search = scf::WhileOp::create(b, loc, TypeRange{index, index},
                                     ValueRange{zero, one});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before =
        b.createBlock(&search.getBefore(), {}, {index, index}, {loc, loc});
    Value small = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        before->getArgument(1), n);
    scf::ConditionOp::create(b, loc, small, before->getArguments());
    Block *after =
        b.createBlock(&search.getAfter(), {}, {index, index}, {loc, loc});
    Value r = arith::AddIOp::create(b, loc, after->getArgument(0), one);
    Value beta = arith::DivUIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, after->getArgument(1),
                              arith::AddIOp::create(b, loc, s, r)),
        r);
    scf::YieldOp::create(b, loc, ValueRange{r, beta});
  }
  Value r = search.getResult(0), beta = search.getResult(1);
  Value right =
      arith::DivUIOp::create(b, loc, arith::MulIOp::create(b, loc, beta, s),
                             arith::AddIOp::create(b, loc, s, r));
  Value left = arith::SubIOp::create(b, loc, n, right);
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, left, zero);
  return arith::SelectOp::create(b, loc, positive, left, one);
}

SmallVector<Value> VJPEmitter::advanceSteps(SteppedLoop &loop, Value from,
                                            Value to, ValueRange state) {
  Location loc = loop.op->getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto steps = scf::ForOp::create(b, loc, from, to, one, state);
  OpBuilder::InsertionGuard guard(b);
  clearTerminator(*steps.getBody());
  b.setInsertionPointToEnd(steps.getBody());
  Operation *savedRoot = recomputeRoot;
  recomputeRoot = loop.op;
  SmallVector<Value> next =
      loop.advance(steps.getInductionVar(), steps.getRegionIterArgs());
  recomputeRoot = savedRoot;
  scf::YieldOp::create(b, loc, next);
  return steps.getResults();
}

LogicalResult VJPEmitter::reverseCheckpointed(SteppedLoop &loop,
                                              const CheckpointStrategy &strategy,
                                              ValueRange adjoints,
                                              ArrayRef<Value> outside,
                                              AdjointScope &outer) {
  Location loc = loop.op->getLoc();
  if (strategy.restartable)
    return reverseStepByStep(loop, strategy, adjoints, outside, outer);
  Type index = b.getIndexType();
  int64_t snapshots = strategy.snapshots;
  // Recomputation writes the snapshotted buffers (restored with the state).
  llvm::DenseSet<Value> savedMemories = std::move(snapshotMemories);
  snapshotMemories = llvm::DenseSet<Value>(strategy.memories.begin(),
                                           strategy.memories.end());
  llvm::scope_exit restoreMemories(
      [&] { snapshotMemories = std::move(savedMemories); });
  if (strategy.everyStep)
    return reverseStepByStep(loop, strategy, adjoints, outside, outer);
  SmallVector<Type> stateTypes =
      llvm::map_to_vector(loop.inits, [](Value v) { return v.getType(); });
  // Snapshot slots: a position and one slot per state value each.
  Value positions;
  SmallVector<Value> slots;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry);
    positions = createPrivateSlots(b, loc, index, snapshots);
    for (Type type : stateTypes) {
      Value memref = createPrivateSlots(b, loc, type, snapshots);
      if (!memref)
        return loop.op->emitOpError("carries a value of type ")
               << type << ", which a checkpoint cannot hold";
      slots.push_back(memref);
    }
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lastSlot = arith::ConstantIndexOp::create(b, loc, snapshots - 1);
  auto saveSnapshot = [&](Value slot, Value position, ValueRange state) {
    storePrivateSlot(b, loc, position, positions, slot);
    for (auto [v, memref] : llvm::zip(state, slots))
      storePrivateSlot(b, loc, v, memref, slot);
  };
  // Snapshot 0's buffers were saved by the forward sweep, before the loop
  // ran.
  saveSnapshot(zero, zero, loop.inits);

  // while (end > 0): reverse step end - 1. Carried: end, the top snapshot,
  // the adjoints of the carried state entries and of outside values.
  SmallVector<Value> inits = {loop.count, zero};
  llvm::append_range(inits, adjoints);
  for (Value o : outside)
    inits.push_back(createZero(b, loc, o.getType()));
  SmallVector<Type> types =
      llvm::map_to_vector(inits, [](Value v) { return v.getType(); });
  SmallVector<Location> locs(types.size(), loc);
  auto sweep = scf::WhileOp::create(b, loc, types, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&sweep.getBefore(), {}, types, locs);
    scf::ConditionOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                              before->getArgument(0), zero),
        before->getArguments());
    Block *after = b.createBlock(&sweep.getAfter(), {}, types, locs);
    Value end = after->getArgument(0);
    Value top = after->getArgument(1);
    ValueRange carriedAdjoints =
        after->getArguments().slice(2, adjoints.size());
    ValueRange outsideAdjoints =
        after->getArguments().drop_front(2 + adjoints.size());
    Value target = arith::SubIOp::create(b, loc, end, one);
    // Restore the top snapshot, then advance to the step to reverse, taking
    // snapshots on the way while slots are free.
    SmallVector<Value> restored = {
        loadPrivateSlot(b, loc, positions, top, index), top};
    for (auto [memref, type] : llvm::zip(slots, stateTypes))
      restored.push_back(loadPrivateSlot(b, loc, memref, top, type));
    if (!strategy.memories.empty())
      copyMemorySnapshot(strategy, top, /*save=*/false, loc);
    SmallVector<Type> advanceTypes =
        llvm::map_to_vector(restored, [](Value v) { return v.getType(); });
    SmallVector<Location> advanceLocs(advanceTypes.size(), loc);
    auto forward = scf::WhileOp::create(b, loc, advanceTypes, restored);
    {
      OpBuilder::InsertionGuard inner(b);
      Block *check =
          b.createBlock(&forward.getBefore(), {}, advanceTypes, advanceLocs);
      scf::ConditionOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                check->getArgument(0), target),
          check->getArguments());
      Block *step =
          b.createBlock(&forward.getAfter(), {}, advanceTypes, advanceLocs);
      Value position = step->getArgument(0);
      Value used = step->getArgument(1);
      Value free = arith::SubIOp::create(b, loc, lastSlot, used);
      Value hasFree =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, free, zero);
      Value left = arith::SubIOp::create(b, loc, end, position);
      Value next = arith::SelectOp::create(
          b, loc, hasFree,
          arith::AddIOp::create(b, loc, position,
                                emitSnapshotOffset(b, loc, left, free)),
          target);
      SmallVector<Value> state = advanceSteps(
          loop, position, next, step->getArguments().drop_front(2));
      Value nextUsed = arith::SelectOp::create(
          b, loc, hasFree, arith::AddIOp::create(b, loc, used, one), used);
      auto take = scf::IfOp::create(b, loc, hasFree, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard branch(b);
        b.setInsertionPointToStart(take.thenBlock());
        saveSnapshot(nextUsed, next, state);
        if (!strategy.memories.empty())
          copyMemorySnapshot(strategy, nextUsed, /*save=*/true, loc);
      }
      SmallVector<Value> yields = {next, nextUsed};
      llvm::append_range(yields, state);
      scf::YieldOp::create(b, loc, yields);
    }
    Value reachedTop = forward.getResult(1);
    ValueRange state = forward.getResults().drop_front(2);
    // Reverse step `target` from its state.
    AdjointScope scope;
    for (auto [o, d] : llvm::zip(outside, outsideAdjoints))
      scope.adjoints[o] = d;
    FailureOr<SmallVector<Value>> previous;
    if (failed(inLocalSweep(loop.op, [&] {
          previous = loop.reverseStep(target, state, carriedAdjoints, scope);
          return success(succeeded(previous));
        })))
      return failure();
    // The snapshot at `target` has served its last step.
    Value topPosition = loadPrivateSlot(b, loc, positions, reachedTop, index);
    Value done = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, topPosition,
                              target),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, reachedTop,
                              zero));
    Value nextTop = arith::SelectOp::create(
        b, loc, done, arith::SubIOp::create(b, loc, reachedTop, one),
        reachedTop);
    SmallVector<Value> yields = {target, nextTop};
    llvm::append_range(yields, *previous);
    for (Value o : outside)
      yields.push_back(scope.get(o));
    scf::YieldOp::create(b, loc, yields);
  }
  for (auto [k, i] : llvm::enumerate(loop.carried))
    if (act.isVaried(loop.srcInits[i]))
      outer.add(b, loc, loop.srcInits[i], sweep.getResult(2 + k));
  for (auto [k, o] : llvm::enumerate(outside))
    outer.add(b, loc, o, sweep.getResult(2 + adjoints.size() + k));
  return success();
}

LogicalResult VJPEmitter::reverseStepByStep(SteppedLoop &loop,
                                            const CheckpointStrategy &strategy,
                                            ValueRange adjoints,
                                            ArrayRef<Value> outside,
                                            AdjointScope &outer) {
  // Step count - 1 - k starts from its index alone, or from its snapshot.
  Location loc = loop.op->getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> inits(adjoints);
  for (Value o : outside)
    inits.push_back(createZero(b, loc, o.getType()));
  auto sweep = scf::ForOp::create(b, loc, zero, loop.count, one, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    // Without iter_args the builder made the yield; ours replaces it.
    clearTerminator(*sweep.getBody());
    b.setInsertionPointToStart(sweep.getBody());
    Value target = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, loop.count, one),
        sweep.getInductionVar());
    SmallVector<Value> state;
    if (strategy.everyStep) {
      for (auto [slots, init] : llvm::zip(strategy.stateSlots, loop.inits))
        state.push_back(loadPrivateSlot(b, loc, slots, target, init.getType()));
      copyStepSnapshot(strategy, target, /*save=*/false, loc);
    }
    ValueRange carried = sweep.getRegionIterArgs().take_front(adjoints.size());
    AdjointScope scope;
    for (auto [o, d] : llvm::zip(
             outside, sweep.getRegionIterArgs().drop_front(adjoints.size())))
      scope.adjoints[o] = d;
    FailureOr<SmallVector<Value>> previous;
    if (failed(inLocalSweep(loop.op, [&] {
          previous = loop.reverseStep(target, state, carried, scope);
          return success(succeeded(previous));
        })))
      return failure();
    SmallVector<Value> yields = std::move(*previous);
    for (Value o : outside)
      yields.push_back(scope.get(o));
    scf::YieldOp::create(b, loc, yields);
  }
  for (auto [k, i] : llvm::enumerate(loop.carried))
    if (act.isVaried(loop.srcInits[i]))
      outer.add(b, loc, loop.srcInits[i], sweep.getResult(k));
  for (auto [k, o] : llvm::enumerate(outside))
    outer.add(b, loc, o, sweep.getResult(adjoints.size() + k));
  return success();
}

LogicalResult CheckpointStrategy::forward(VJPEmitter &emitter, scf::ForOp op) {
  if (everyStep)
    return emitter.forwardStepSnapshottedFor(op, *this);
  emitter.beginMemorySnapshots(*this, op.getLoc());
  return emitter.forwardCheckpointedFor(op);
}

void VJPEmitter::beginMemorySnapshots(CheckpointStrategy &strategy,
                                      Location loc) {
  if (strategy.memories.empty() || !strategy.memorySlots.empty())
    return;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry);
    for (Value m : strategy.memories) {
      auto type = cast<MemRefType>(m.getType());
      strategy.memorySlots.push_back(
          createPrivateSlots(b, loc, type.getElementType(),
                             strategy.snapshots * type.getNumElements()));
    }
  }
  // Snapshot 0: the buffers as the loop finds them.
  copyMemorySnapshot(strategy, arith::ConstantIndexOp::create(b, loc, 0),
                     /*save=*/true, loc);
}

//===----------------------------------------------------------------------===//
// Every step's snapshot in the global tape
//===----------------------------------------------------------------------===//

static bool isWorkgroupMemory(Value memory) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      cast<MemRefType>(memory.getType()).getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

std::unique_ptr<CheckpointStrategy>
VJPEmitter::planStepSnapshots(scf::ForOp op, ArrayRef<Value> memories) {
  if (recomputeRoot || !llvm::any_of(memories, isWorkgroupMemory))
    return nullptr;
  for (Type type : op.getInitArgs().getTypes())
    if (privateSlotBytes(type) == 0 || privateSlotBytes(type) > 8)
      return nullptr;
  Value lb = hoistToEntry(fwd.lookupOrNull(op.getLowerBound()));
  Value ub = hoistToEntry(fwd.lookupOrNull(op.getUpperBound()));
  Value step = hoistToEntry(fwd.lookupOrNull(op.getStep()));
  if (!lb || !ub || !step)
    return nullptr;
  Location loc = op.getLoc();
  auto strategy = std::make_unique<CheckpointStrategy>(/*snapshots=*/0);
  strategy->everyStep = true;
  strategy->memories.assign(memories.begin(), memories.end());
  OpBuilder::InsertionGuard guard(b);
  setInsertionPointAtEntry();
  Value count = emitTripCount(loc, lb, ub, step);
  for (Type type : op.getInitArgs().getTypes())
    strategy->stateSlots.push_back(createGlobalSlots(b, loc, type, count));
  Value threads = emitLinearIdAndCount(b, loc).second;
  for (Value m : memories) {
    auto type = cast<MemRefType>(m.getType());
    Value size = arith::ConstantIndexOp::create(b, loc, type.getNumElements());
    Value share =
        isWorkgroupMemory(m) ? emitShareOf(b, loc, size, threads) : size;
    strategy->shares.push_back(share);
    strategy->memorySlots.push_back(
        createGlobalSlots(b, loc, type.getElementType(),
                          arith::MulIOp::create(b, loc, count, share)));
  }
  hoistAnchor = &*std::prev(b.getInsertionPoint());
  return strategy;
}

void VJPEmitter::copyStepSnapshot(const CheckpointStrategy &strategy,
                                  Value step, bool save, Location loc) {
  for (auto [src, slots, share] :
       llvm::zip(strategy.memories, strategy.memorySlots, strategy.shares)) {
    Value memory = fwd.lookup(src);
    auto type = cast<MemRefType>(memory.getType());
    bool workgroup = isWorkgroupMemory(memory);
    Value size = arith::ConstantIndexOp::create(b, loc, type.getNumElements());
    Value first = arith::ConstantIndexOp::create(b, loc, 0);
    Value stride = arith::ConstantIndexOp::create(b, loc, 1);
    // Each thread its share, after every thread's last access.
    if (workgroup) {
      gpu::BarrierOp::create(b, loc);
      std::tie(first, stride) = emitLinearIdAndCount(b, loc);
    }
    Value base = arith::MulIOp::create(b, loc, step, share);
    scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0), share,
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{},
        [&](OpBuilder &nested, Location l, Value j, ValueRange) {
          Value element = arith::AddIOp::create(
              nested, l, first, arith::MulIOp::create(nested, l, j, stride));
          Value at = arith::AddIOp::create(nested, l, base, j);
          // The last thread's share may end past the buffer.
          auto inside = scf::IfOp::create(
              nested, l,
              arith::CmpIOp::create(nested, l, arith::CmpIPredicate::ult,
                                    element, size),
              /*withElseRegion=*/false);
          OpBuilder then = inside.getThenBodyBuilder();
          SmallVector<Value> indices = elementIndices(then, l, type, element);
          if (save) {
            Value v = memref::LoadOp::create(then, l, memory, indices);
            storePrivateSlot(then, l, v, slots, at);
          } else {
            Value v =
                loadPrivateSlot(then, l, slots, at, type.getElementType());
            memref::StoreOp::create(then, l, v, memory, indices);
          }
          scf::YieldOp::create(nested, l);
        });
    // Saved before any thread overwrites another's share; restored before
    // any thread reads it.
    if (workgroup)
      gpu::BarrierOp::create(b, loc);
  }
}

LogicalResult
VJPEmitter::forwardStepSnapshottedFor(scf::ForOp op,
                                      const CheckpointStrategy &strategy) {
  auto clone = cast<scf::ForOp>(b.clone(*op, fwd));
  for (auto [src, dst] : llvm::zip(op->getResults(), clone->getResults()))
    defined(src, dst);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(clone.getBody());
  Location loc = op.getLoc();
  Value k = arith::DivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, clone.getInductionVar(),
                            clone.getLowerBound()),
      clone.getStep());
  for (auto [arg, slots] :
       llvm::zip(clone.getRegionIterArgs(), strategy.stateSlots))
    storePrivateSlot(b, loc, arg, slots, k);
  copyStepSnapshot(strategy, k, /*save=*/true, loc);
  return success();
}

LogicalResult CheckpointStrategy::reverse(VJPEmitter &emitter, scf::ForOp op,
                                          AdjointScope &outer) {
  return emitter.reverseCheckpointedFor(op, *this, outer);
}

LogicalResult VJPEmitter::forwardCheckpointedFor(scf::ForOp op) {
  // The primal loop as is (or, when recomputing an enclosing loop, without
  // its writes to memory from outside that loop).
  Operation *clone =
      recomputeRoot ? cloneRecomputed(op, fwd) : b.clone(*op, fwd);
  for (auto [src, dst] : llvm::zip(op->getResults(), clone->getResults()))
    defined(src, dst);
  return success();
}

LogicalResult
VJPEmitter::reverseCheckpointedFor(scf::ForOp op,
                                   const CheckpointStrategy &strategy,
                                   AdjointScope &outer) {
  Location loc = op.getLoc();
  Value lb = fwd.lookup(op.getLowerBound());
  Value step = fwd.lookup(op.getStep());
  SteppedLoop loop;
  loop.op = op;
  loop.srcInits = op.getInitArgs();
  loop.inits = mapped(op.getInitArgs());
  loop.count = emitTripCount(loc, lb, fwd.lookup(op.getUpperBound()), step);
  for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
    if (act.isVaried(arg))
      loop.carried.push_back(i);
  auto enter = [&](Value t, ValueRange state) {
    fwd.map(op.getInductionVar(),
            arith::AddIOp::create(b, loc, lb,
                                  arith::MulIOp::create(b, loc, t, step)));
    fwd.map(op.getRegionIterArgs(), state);
  };
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  loop.advance = [&](Value t, ValueRange state) {
    enter(t, state);
    for (Operation &inner : op.getBody()->without_terminator())
      (void)cloneRecomputed(&inner, fwd);
    return mapped(yield.getOperands());
  };
  loop.reverseStep = [&](Value t, ValueRange state, ValueRange adjoints,
                         AdjointScope &scope) -> FailureOr<SmallVector<Value>> {
    enter(t, state);
    if (failed(forwardBlock(*op.getBody())))
      return failure();
    for (auto [k, i] : llvm::enumerate(loop.carried))
      scope.add(b, loc, yield.getOperand(i), adjoints[k]);
    if (failed(reverseBlock(*op.getBody(), scope)))
      return failure();
    return carriedAdjoints(b, loc, scope, op.getRegionIterArgs(), loop.carried);
  };
  SmallVector<Value> adjoints;
  for (unsigned i : loop.carried) {
    Value d = outer.get(op.getResult(i));
    adjoints.push_back(d ? d : createZero(b, loc, op.getResult(i).getType()));
  }
  return reverseCheckpointed(loop, strategy, adjoints, usedFromOutside(op),
                             outer);
}

//===----------------------------------------------------------------------===//
// scf.while
//===----------------------------------------------------------------------===//

SmallVector<Value> VJPEmitter::cloneBody(Block &block, IRMapping &mapping) {
  for (Operation &inner : block.without_terminator()) {
    if (recomputeRoot)
      (void)cloneRecomputed(&inner, mapping);
    else
      b.clone(inner, mapping);
  }
  Operation *terminator = block.getTerminator();
  ValueRange passed = isa<scf::ConditionOp>(terminator)
                          ? cast<scf::ConditionOp>(terminator).getArgs()
                          : terminator->getOperands();
  return llvm::map_to_vector(passed,
                             [&](Value v) { return mapping.lookup(v); });
}

std::tuple<scf::WhileOp, Block *, Block *>
VJPEmitter::createCountingWhile(scf::WhileOp op) {
  Location loc = op.getLoc();
  SmallVector<Value> inits = mapped(op.getInits());
  inits.push_back(arith::ConstantIndexOp::create(b, loc, 0));
  SmallVector<Type> types(op.getResultTypes());
  types.push_back(b.getIndexType());
  auto loop = scf::WhileOp::create(b, loc, types, inits);
  auto makeBlock = [&](Region &region, TypeRange argTypes) {
    SmallVector<Type> all(argTypes);
    all.push_back(b.getIndexType());
    SmallVector<Location> locs(all.size(), loc);
    return b.createBlock(&region, {}, all, locs);
  };
  OpBuilder::InsertionGuard guard(b);
  Block *before =
      makeBlock(loop.getBefore(), op.getBefore().getArgumentTypes());
  Block *after = makeBlock(loop.getAfter(), op.getAfter().getArgumentTypes());
  return {loop, before, after};
}

LogicalResult VJPEmitter::forwardWhile(scf::WhileOp op) {
  std::unique_ptr<LoopStrategy> strategy = planLoop(op);
  if (!strategy)
    return failure();
  if (auto *tree = dyn_cast<ReductionTreeStrategy>(strategy.get())) {
    LogicalResult forward = tree->forwardTree(*this, op);
    loopPlans[op] = std::move(strategy);
    return forward;
  }
  if (auto *tape = dyn_cast<WhileTapeStrategy>(strategy.get())) {
    loopPlans[op] = std::move(strategy);
    return forwardTapedWhile(op, *tape);
  }
  beginMemorySnapshots(cast<CheckpointStrategy>(*strategy), op.getLoc());
  loopPlans[op] = std::move(strategy);
  // The primal while again, counting the executions of its after region.
  Location loc = op.getLoc();
  auto [loop, before, after] = createCountingWhile(op);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(before);
    IRMapping mapping = fwd;
    mapping.map(op.getBeforeArguments(), before->getArguments().drop_back());
    SmallVector<Value> passed = cloneBody(op.getBefore().front(), mapping);
    passed.push_back(before->getArguments().back());
    scf::ConditionOp::create(
        b, loc, mapping.lookup(op.getConditionOp().getCondition()), passed);
    b.setInsertionPointToEnd(after);
    mapping.map(op.getAfterArguments(), after->getArguments().drop_back());
    SmallVector<Value> yielded = cloneBody(op.getAfter().front(), mapping);
    yielded.push_back(
        arith::AddIOp::create(b, loc, after->getArguments().back(),
                              arith::ConstantIndexOp::create(b, loc, 1)));
    scf::YieldOp::create(b, loc, yielded);
  }
  for (auto [src, dst] : llvm::zip(op.getResults(), loop.getResults()))
    defined(src, dst);
  OpBuilder keys(b.getContext());
  keys.setInsertionPointToEnd(&countKeys);
  Value key = UnrealizedConversionCastOp::create(
                  keys, loc, TypeRange{b.getIndexType()}, ValueRange{})
                  .getResult(0);
  whileCounts[op] = key;
  defined(key, loop.getResults().back());
  return success();
}

LogicalResult VJPEmitter::reverseWhile(scf::WhileOp op, AdjointScope &outer) {
  Location loc = op.getLoc();
  Block &before = op.getBefore().front();
  Block &after = op.getAfter().front();
  auto condition = op.getConditionOp();
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  Value iterations = fwd.lookup(whileCounts[op]);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SteppedLoop loop;
  loop.op = op;
  loop.srcInits = op.getInits();
  loop.inits = mapped(op.getInits());
  // Steps 0 .. N-1 run both regions; step N is the final before region.
  loop.count = arith::AddIOp::create(b, loc, iterations, one);
  for (auto [i, arg] : llvm::enumerate(op.getBeforeArguments()))
    if (act.isVaried(arg))
      loop.carried.push_back(i);
  SmallVector<Value> seeds;
  for (Value r : op.getResults()) {
    Value d = outer.get(r);
    seeds.push_back(d ? d : createZero(b, loc, r.getType()));
  }
  loop.advance = [&](Value, ValueRange state) {
    fwd.map(op.getBeforeArguments(), state);
    SmallVector<Value> passed = cloneBody(before, fwd);
    fwd.map(op.getAfterArguments(), passed);
    return cloneBody(after, fwd);
  };
  SmallVector<Value> outside = usedFromOutside(op);
  // One execution of the regions (`withAfter`) or of the final before
  // region, forward then reverse, inside a branch of the step's scf.if.
  auto reverseRegions =
      [&](bool withAfter, ValueRange state, ValueRange adjoints,
          AdjointScope &scope) -> FailureOr<SmallVector<Value>> {
    fwd.map(op.getBeforeArguments(), state);
    if (failed(forwardBlock(before)))
      return failure();
    if (withAfter) {
      fwd.map(op.getAfterArguments(), mapped(condition.getArgs()));
      if (failed(forwardBlock(after)))
        return failure();
      for (auto [k, i] : llvm::enumerate(loop.carried))
        if (act.isVaried(yield.getOperand(i)))
          scope.add(b, loc, yield.getOperand(i), adjoints[k]);
      if (failed(reverseBlock(after, scope)))
        return failure();
      for (auto [v, arg] :
           llvm::zip(condition.getArgs(), op.getAfterArguments()))
        if (act.isVaried(v))
          scope.add(b, loc, v, scope.get(arg));
    } else {
      for (auto [v, d] : llvm::zip(condition.getArgs(), seeds))
        if (act.isVaried(v))
          scope.add(b, loc, v, d);
    }
    if (failed(reverseBlock(before, scope)))
      return failure();
    SmallVector<Value> previous =
        carriedAdjoints(b, loc, scope, op.getBeforeArguments(), loop.carried);
    for (Value o : outside)
      previous.push_back(scope.get(o));
    return previous;
  };
  loop.reverseStep = [&](Value t, ValueRange state, ValueRange adjoints,
                         AdjointScope &scope) -> FailureOr<SmallVector<Value>> {
    SmallVector<Type> types;
    for (unsigned i : loop.carried)
      types.push_back(op.getBeforeArguments()[i].getType());
    for (Value o : outside)
      types.push_back(o.getType());
    Value final =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, iterations);
    auto branch = scf::IfOp::create(b, loc, types, final,
                                    /*withElseRegion=*/true);
    for (int k = 0; k < 2; ++k) {
      OpBuilder::InsertionGuard guard(b);
      Block *block = k == 0 ? branch.thenBlock() : branch.elseBlock();
      clearTerminator(*block);
      b.setInsertionPointToEnd(block);
      AdjointScope local = scope;
      FailureOr<SmallVector<Value>> yields =
          reverseRegions(/*withAfter=*/k == 1, state, adjoints, local);
      if (failed(yields))
        return failure();
      scf::YieldOp::create(b, loc, *yields);
    }
    for (auto [k, o] : llvm::enumerate(outside))
      scope.adjoints[o] = branch.getResult(loop.carried.size() + k);
    return SmallVector<Value>(
        branch.getResults().take_front(loop.carried.size()));
  };
  SmallVector<Value> adjoints;
  for (unsigned i : loop.carried)
    adjoints.push_back(
        createZero(b, loc, op.getBeforeArguments()[i].getType()));
  return reverseCheckpointed(loop, cast<CheckpointStrategy>(*loopPlans[op]),
                             adjoints, outside, outer);
}

void CheckpointStrategy::remark(Operation *loop, int64_t bytes) const {
  if (everyStep) {
    loop->emitRemark() << "loop reversed from a snapshot of every step: its "
                          "state and each thread's share of the "
                       << memories.size()
                       << " buffer(s) it overwrites and reads, in the global "
                          "tape; nothing recomputed, "
                       << bytes << " bytes per thread";
    return;
  }
  if (restartable) {
    loop->emitRemark() << "loop reversed by recomputing each iteration from "
                          "its index (its only state): no snapshots, "
                       << bytes << " bytes per thread";
    return;
  }
  InFlightDiagnostic diag = loop->emitRemark()
                            << "loop reversed by binomial checkpointing with "
                            << snapshots << " snapshots";
  if (!memories.empty())
    diag << " of its state and of the " << memories.size()
         << " buffer(s) it overwrites and reads";
  diag << ": " << bytes << " bytes per thread";
}
