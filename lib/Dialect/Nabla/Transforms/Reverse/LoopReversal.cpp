//===- LoopReversal.cpp - Choosing how each loop is reversed --------------===//
//
// Every loop on an active path is reversed by one of three strategies
// (LoopStrategies.h), chosen per loop by a small cost model and reported with
// remarks=true:
//
//  - Tape (LoopTape.cpp): the values each iteration defines go to per-thread
//    slots. Needs a static bound on the trip count: constant bounds, or the
//    hint `nabla.max_trip_count` (checked at run time). Chosen when the tape
//    fits `tape-budget` bytes per thread, or when checkpointing is impossible.
//  - Preaccumulation (LoopPreaccumulation.cpp): a loop with no static bound
//    whose state is a few scalars updated by pure float ops carries its
//    Jacobian forward instead of being recomputed.
//  - Checkpoint (LoopCheckpointing.cpp): binomial checkpointing (revolve)
//    with K snapshots of the loop state; iterations are recomputed from the
//    snapshots. Needs the loop's reads to be repeatable: memory it reads must
//    not be overwritten by the loop itself, by later code or by an enclosing
//    loop (PromoteLoopElements.cpp first turns elements a loop updates in
//    place into loop-carried values), unless only linear stores use what
//    they read (in-place sums and butterflies: their adjoints need no primal
//    value). Writes to memory from outside the loop are skipped when
//    recomputing.
//
// This file holds the choice, the stability analysis and the recomputing
// clone; the strategies live in their own files.
//
//===----------------------------------------------------------------------===//

#include "Implementations/EmitterHooks.h"
#include "ReverseEmitter.h"

#include "GPUDerivatives.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace nabla;

void VJPEmitter::collectWrittenBuffers(Block &body) {
  body.walk([&](Operation *op) {
    auto note = [&](Value memref) {
      Value base = getViewSource(memref);
      writtenBuffers.insert(base);
      SmallVector<Operation *> &writers = writersOf[base];
      if (writers.empty() || writers.back() != op)
        writers.push_back(op);
    };
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    SmallVector<MemoryEffects::EffectInstance> list;
    if (effects)
      effects.getEffects(list);
    bool unknown =
        !effects && !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
    for (auto &effect : list)
      if (isa<MemoryEffects::Write>(effect.getEffect())) {
        if (Value v = effect.getValue())
          note(v);
        else
          unknown = true;
      }
    if (unknown)
      for (Value v : op->getOperands())
        if (isa<BaseMemRefType>(v.getType()))
          note(v);
  });
}

/// True if `v` is defined inside `op` (by an op or as a block argument of
/// one of its regions).
static bool isDefinedInside(Value v, Operation *op) {
  return op->isAncestor(v.getParentRegion()->getParentOp());
}

static bool isLoop(Operation *op) { return isa<LoopLikeOpInterface>(op); }

bool VJPEmitter::isStableIn(Value buffer, Operation *loop) {
  for (Operation *writer : writersOf.lookup(buffer)) {
    if (loop->isAncestor(writer))
      return false;
    // Find the block holding both (an ancestor of) the writer and an
    // ancestor `a` of the loop: the writer must come first there, and no
    // loop may enclose that block.
    bool placed = false;
    for (Operation *a = loop; a && !isa<FunctionOpInterface>(a);
         a = a->getParentOp()) {
      Operation *w = a->getBlock()->findAncestorOpInBlock(*writer);
      if (!w)
        continue;
      if (w == a) {
        // Another region of `a`: the other branch of an scf.if is fine, the
        // other region of a loop runs again.
        if (isLoop(a))
          return false;
      } else if (!w->isBeforeInBlock(a)) {
        return false;
      }
      for (Operation *p = a->getParentOp(); p && !isa<FunctionOpInterface>(p);
           p = p->getParentOp())
        if (isLoop(p))
          return false;
      placed = true;
      break;
    }
    if (!placed)
      return false;
  }
  return true;
}

/// True if `v` is defined by the function's body itself (an argument, a
/// workgroup attribution, an allocation outside every region op).
static bool isDefinedAtFunctionLevel(Value v) {
  return isa<FunctionOpInterface>(v.getParentRegion()->getParentOp());
}

/// True if nothing needs the value `load` reads but its adjoint: it reaches
/// only linear float ops (add, sub, neg, float casts) and stores, as the
/// stored value, into memory defined at function level, which recomputation
/// skips. The adjoint of such a chain reads shadows only (the partials are
/// constants), so an iteration recomputed after that memory was overwritten
/// (`a[i] += a[i + s]` in place, a butterfly) reads a stale value nobody
/// uses.
static bool feedsOnlyLinearStores(memref::LoadOp load) {
  SmallVector<Value> work{load.getResult()};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!isa<FloatType>(v.getType()))
      return false;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<arith::AddFOp, arith::SubFOp, arith::NegFOp, arith::ExtFOp,
              arith::TruncFOp>(user)) {
        if (seen.insert(user).second)
          work.push_back(user->getResult(0));
        continue;
      }
      auto store = dyn_cast<memref::StoreOp>(user);
      if (!store || use.getOperandNumber() != 0 ||
          !isDefinedAtFunctionLevel(getViewSource(store.getMemref())))
        return false;
    }
  }
  return true;
}

Operation *
VJPEmitter::findCheckpointObstacle(Operation *loop,
                                   const llvm::DenseSet<Value> &snapshotted) {
  Operation *obstacle = nullptr;
  loop->walk([&](Operation *op) {
    if (op == loop || isBarrier(op) || isGPUCollective(op))
      return WalkResult::advance();
    if (isa<CallOpInterface>(op) &&
        llvm::any_of(op->getOperandTypes(), llvm::IsaPred<BaseMemRefType>)) {
      obstacle = op;
      return WalkResult::interrupt();
    }
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
      // Its result depends on what other threads did before: repeatable
      // only for memory the iteration owns. The reverse of a float min/max
      // atomic reads its result (the old value decides the winner) even
      // when the primal does not (difftest seed 1050: recomputation had no
      // old value to give it, and the reverse used the forward's).
      bool resultNeeded = !atomic.getResult().use_empty() ||
                          (isFloatMinMaxAtomic(atomic.getKind()) &&
                           act.isVaried(atomic.getValue()));
      if (resultNeeded &&
          !isDefinedInside(getViewSource(atomic.getMemref()), loop))
        obstacle = op;
      return obstacle ? WalkResult::interrupt() : WalkResult::advance();
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      obstacle = op;
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &effect : list) {
      if (!isa<MemoryEffects::Read>(effect.getEffect()))
        continue;
      Value read = effect.getValue();
      if (!read || !isa<BaseMemRefType>(read.getType())) {
        obstacle = op;
        break;
      }
      Value base = getViewSource(read);
      if (isDefinedInside(base, loop) || isStableIn(base, loop) ||
          snapshotted.contains(base))
        continue;
      // A stale read that only linear stores use (not with snapshots:
      // recomputation writes the snapshotted buffers).
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && snapshotted.empty() && feedsOnlyLinearStores(load))
        continue;
      obstacle = op;
      break;
    }
    return obstacle ? WalkResult::interrupt() : WalkResult::advance();
  });
  return obstacle;
}

/// The most bytes per thread the snapshots of a loop's buffers may take.
static constexpr int64_t kMemorySnapshotBudget = 16384;

SmallVector<Value> VJPEmitter::findSnapshotMemories(Operation *loop) {
  // Only a loop no other loop recomputes: its buffers' contents at its start
  // are those of the primal.
  if (recomputeRoot || !forwardIterations.empty())
    return {};
  bool hasBarrier = holdsBarrier(loop);
  llvm::SetVector<Value> found;
  loop->walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return;
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &effect : list) {
      Value v = effect.getValue();
      if (!isa<MemoryEffects::Write>(effect.getEffect()) || !v ||
          !isa<BaseMemRefType>(v.getType()))
        continue;
      Value base = getViewSource(v);
      auto type = dyn_cast<MemRefType>(base.getType());
      if (isDefinedInside(base, loop) || !type)
        continue;
      auto space =
          dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
      bool workgroup =
          space && space.getValue() == gpu::AddressSpace::Workgroup;
      bool local = (space && space.getValue() == gpu::AddressSpace::Private) ||
                   (!type.getMemorySpace() &&
                    base.getDefiningOp<memref::AllocaOp>());
      if (!type || !type.hasStaticShape() || type.getRank() < 1 ||
          !type.getLayout().isIdentity() ||
          privateSlotBytes(type.getElementType()) == 0 ||
          !(local || (workgroup && hasBarrier))) {
        // Memory the loop writes that no snapshot can hold (global
        // buffers): only other reads make the loop recomputable.
        continue;
      }
      found.insert(base);
    }
  });
  return found.takeVector();
}

void VJPEmitter::copyMemorySnapshot(const CheckpointStrategy &strategy,
                                    Value slot, bool save, Location loc) {
  for (auto [src, slots] :
       llvm::zip(strategy.memories, strategy.memorySlots)) {
    Value memory = fwd.lookup(src);
    auto type = cast<MemRefType>(memory.getType());
    auto space =
        dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
    bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
    int64_t size = type.getNumElements();
    Value first = arith::ConstantIndexOp::create(b, loc, 0);
    Value stride = arith::ConstantIndexOp::create(b, loc, 1);
    if (workgroup) {
      // Each thread its share, after every thread's last access.
      gpu::BarrierOp::create(b, loc);
      std::tie(first, stride) = emitLinearIdAndCount(b, loc);
    }
    Value base = arith::MulIOp::create(
        b, loc, slot, arith::ConstantIndexOp::create(b, loc, size));
    scf::ForOp::create(
        b, loc, first, arith::ConstantIndexOp::create(b, loc, size), stride,
        ValueRange{}, [&](OpBuilder &nested, Location l, Value i, ValueRange) {
          Value at = arith::AddIOp::create(nested, l, base, i);
          if (save) {
            Value v = memref::LoadOp::create(
                nested, l, memory, elementIndices(nested, l, type, i));
            storePrivateSlot(nested, l, v, slots, at);
          } else {
            Value v = loadPrivateSlot(nested, l, slots, at,
                                      type.getElementType());
            memref::StoreOp::create(nested, l, v, memory,
                                    elementIndices(nested, l, type, i));
          }
          scf::YieldOp::create(nested, l);
        });
    // Saved before any thread overwrites another's share; restored before
    // any thread reads it.
    if (workgroup)
      gpu::BarrierOp::create(b, loc);
  }
}

bool VJPEmitter::isSkippedWrite(Operation *op) {
  // Recomputing a loop that writes snapshotted buffers keeps its barriers.
  if (isBarrier(op))
    return snapshotMemories.empty();
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::any_of(list, [&](MemoryEffects::EffectInstance &effect) {
    Value v = effect.getValue();
    return isa<MemoryEffects::Write>(effect.getEffect()) && v &&
           isa<BaseMemRefType>(v.getType()) &&
           !isDefinedInside(getViewSource(v), recomputeRoot) &&
           !snapshotMemories.contains(getViewSource(v));
  });
}

Operation *VJPEmitter::cloneRecomputed(Operation *op, IRMapping &mapping) {
  if (isSkippedWrite(op))
    return nullptr;
  if (!op->getNumRegions())
    return b.clone(*op, mapping);
  Operation *copy = b.cloneWithoutRegions(*op, mapping);
  for (auto [src, dst] : llvm::zip(op->getRegions(), copy->getRegions())) {
    for (Block &block : src) {
      Block *clone = new Block();
      dst.push_back(clone);
      mapping.map(&block, clone);
      for (BlockArgument arg : block.getArguments())
        mapping.map(arg, clone->addArgument(arg.getType(), arg.getLoc()));
    }
    for (Block &block : src) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(mapping.lookup(&block));
      for (Operation &inner : block)
        (void)cloneRecomputed(&inner, mapping);
    }
  }
  return copy;
}

LogicalResult
VJPEmitter::inLocalSweep(Operation *loop,
                         llvm::function_ref<LogicalResult()> emit) {
  Operation *savedRoot = recomputeRoot;
  auto savedScopes = std::move(branchScopes);
  auto savedForward = std::move(forwardIterations);
  auto savedReverse = std::move(reverseIterations);
  branchScopes.clear();
  forwardIterations.clear();
  reverseIterations.clear();
  recomputeRoot = loop;
  LogicalResult result = emit();
  recomputeRoot = savedRoot;
  branchScopes = std::move(savedScopes);
  forwardIterations = std::move(savedForward);
  reverseIterations = std::move(savedReverse);
  return result;
}

static std::optional<int64_t> staticTripCount(scf::ForOp op) {
  if (auto l = getConstantIntValue(op.getLowerBound()))
    if (auto u = getConstantIntValue(op.getUpperBound()))
      if (auto s = getConstantIntValue(op.getStep()); s && *s > 0) {
        // divideCeil is unsigned: an upper bound below the lower one (zero
        // trips) would read as a huge count (found by difftest).
        if (*u <= *l)
          return 0;
        int64_t span;
        if (llvm::SubOverflow(*u, *l, span))
          return std::nullopt;
        return llvm::divideCeilSigned(span, *s);
      }
  return std::nullopt;
}

/// True if `loop` holds an scf.while (which has no count to size tape
/// slots by).
static bool holdsWhileLoop(Operation *loop) {
  return loop->walk([](scf::WhileOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

bool VJPEmitter::holdsUntapeableLoop(Operation *loop) {
  return loop
      ->walk([&](Operation *inner) {
        if (inner == loop || !isa<scf::ForOp, scf::WhileOp>(inner))
          return WalkResult::advance();
        auto forOp = dyn_cast<scf::ForOp>(inner);
        bool bounded = forOp && (staticTripCount(forOp) ||
                                 inner->hasAttr(kMaxTripCountAttrName) ||
                                 tripCountBound(forOp));
        if ((!bounded || holdsWhileLoop(inner)) &&
            findCheckpointObstacle(inner))
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// True if src `v` provably varies across the threads of a block: it
/// depends on a thread or lane id, a shuffle, or memory read at such an
/// index. (Loop-carried values count as uniform: this only catches inputs
/// that are certainly wrong.)
static bool variesAcrossThreads(Value v, DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg != loop.getInductionVar())
      return false;
    return variesAcrossThreads(loop.getLowerBound(), seen) ||
           variesAcrossThreads(loop.getUpperBound(), seen) ||
           variesAcrossThreads(loop.getStep(), seen);
  }
  Operation *def = v.getDefiningOp();
  if (isa<gpu::ThreadIdOp, gpu::GlobalIdOp, gpu::LaneIdOp, gpu::ShuffleOp>(def))
    return true;
  ValueRange operands = def->getOperands();
  if (auto load = dyn_cast<memref::LoadOp>(def))
    operands = load.getIndices();
  return llvm::any_of(operands,
                      [&](Value o) { return variesAcrossThreads(o, seen); });
}

/// A located error if `loop` holds a barrier but its trip count varies
/// across the threads of a block: no reversal keeps that barrier convergent
/// (and the primal is already undefined there).
static LogicalResult checkConvergentTripCount(Operation *loop) {
  Operation *barrier = nullptr;
  loop->walk([&](gpu::BarrierOp op) {
    barrier = op;
    return WalkResult::interrupt();
  });
  if (!barrier)
    return success();
  SmallVector<Value> controls;
  if (auto forOp = dyn_cast<scf::ForOp>(loop))
    controls = {forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()};
  else
    controls = {cast<scf::WhileOp>(loop).getConditionOp().getCondition()};
  DenseSet<Value> seen;
  if (llvm::none_of(controls,
                    [&](Value v) { return variesAcrossThreads(v, seen); }))
    return success();
  InFlightDiagnostic diag = loop->emitOpError(
      "holds a gpu.barrier but its trip count varies across the threads of a "
      "block (it depends on a thread id or on memory read at a "
      "thread-dependent index); no reversal keeps the barrier convergent");
  diag.attachNote(barrier->getLoc()) << "the barrier";
  return diag;
}

LoopStrategy::~LoopStrategy() = default;

std::unique_ptr<LoopStrategy> VJPEmitter::planLoop(Operation *loop) {
  if (failed(checkConvergentTripCount(loop)))
    return nullptr;
  if (loopOptions.split)
    return planSplitLoop(loop);
  auto chosen = [&](std::unique_ptr<LoopStrategy> strategy, int64_t bytes) {
    if (remarks)
      strategy->remark(loop, bytes);
    return strategy;
  };
  // A block's sum tree whose root alone is read: a broadcast, nothing kept.
  if (!recomputeRoot)
    if (auto tree = ReductionTreeStrategy::match(loop, attributionArgs))
      return chosen(std::move(tree), 0);
  // A while inside a taped loop: its steps go to a growing tape, per
  // iteration of the enclosing ones (checkpointing it would need its count
  // in the reverse sweep of their iterations, which keeps only tapes).
  if (auto whileOp = dyn_cast<scf::WhileOp>(loop);
      whileOp && !forwardIterations.empty() && !recomputeRoot) {
    if (auto tape = planWhileTape(whileOp))
      return chosen(std::move(tape), 0);
    loop->emitOpError("cannot be reversed inside a loop taped in global "
                      "memory: only a while loop whose enclosing loops are "
                      "all taped there can be (a growing tape per enclosing "
                      "iteration)");
    return nullptr;
  }
  // The hints' values and places are checked by the nabla dialect's
  // attribute verifier.
  int64_t snapshots = loopOptions.checkpoints;
  if (auto k = loop->getAttrOfType<IntegerAttr>(kCheckpointsAttrName))
    snapshots = k.getInt();
  std::optional<int64_t> bound;
  bool hinted = false;
  auto forOp = dyn_cast<scf::ForOp>(loop);
  if (forOp) {
    bound = staticTripCount(forOp);
    if (!bound)
      if (auto hint = loop->getAttrOfType<IntegerAttr>(kMaxTripCountAttrName)) {
        bound = hint.getInt();
        hinted = true;
      }
  }
  // A while has no count to size slots by: a loop holding one recomputes it.
  bool derived = false;
  bool holdsWhile = holdsWhileLoop(loop);
  Operation *obstacle = findCheckpointObstacle(loop);
  // A loop that cannot be recomputed, whose bound is a run-time value of
  // known range (`min(t + 1 - t2, 32)`): taped by that range.
  if (forOp && !bound && obstacle)
    if ((bound = tripCountBound(forOp)))
      derived = true;
  int64_t stateBytes = 8; // the snapshot's position
  for (Type type :
       isa<scf::ForOp>(loop)
           ? TypeRange(forOp.getInitArgs().getTypes())
           : TypeRange(cast<scf::WhileOp>(loop).getInits().getTypes()))
    stateBytes += privateSlotBytes(type);
  // A loop with no static bound that would be checkpointed, whose state is a
  // few scalars updated by pure float ops, carries its Jacobian instead (no
  // recomputation; explicit nabla.checkpoints keeps checkpointing).
  if (forOp && !bound && !loop->hasAttr(kCheckpointsAttrName) &&
      !recomputeRoot) {
    auto plan = std::make_unique<PreaccumulationStrategy>();
    if (canPreaccumulate(forOp, *plan)) {
      Type type = forOp.getRegionIterArgs()[plan->state.front()].getType();
      int64_t bytes =
          privateSlotBytes(type) * plan->state.size() * plan->inputs.size();
      return chosen(std::move(plan), bytes);
    }
  }
  SlotCount enclosing =
      forwardIterations.empty() ? SlotCount() : forwardIterations.back().second;
  if (bound && !holdsWhile) {
    auto tape = std::make_unique<TapeStrategy>();
    collectTaped(forOp, tape->taped, tape->recomputed);
    // Inside a loop taped in global memory, slots are global too.
    tape->global = enclosing.isDynamic();
    int64_t perSlot = 0;
    for (Value v : tape->taped)
      perSlot += tapeSlotBytes(v.getType(), tape->global);
    int64_t slots = 0, bytes = 0;
    if (llvm::MulOverflow(*bound, enclosing.fixed, slots) ||
        llvm::MulOverflow(slots, perSlot, bytes))
      bytes = std::numeric_limits<int64_t>::max();
    bool fits = bytes <= loopOptions.tapeBudget;
    // A proven bound too large for a private tape: the global tape, sized
    // by the real trip count, when the loop's bounds are known at entry.
    bool globalInstead = derived && !fits && !tape->global &&
                         boundsKnownAtEntry(forOp);
    if (!globalInstead && (obstacle || tape->global || fits)) {
      tape->bound = *bound;
      tape->hinted = hinted;
      tape->derived = derived;
      return chosen(std::move(tape), bytes);
    }
    if (globalInstead) {
      bound.reset();
      derived = false;
    }
  }
  // A runtime trip count inside a loop taped in global memory: taped there
  // too (each enclosing iteration's slots follow the last's).
  if (forOp && !bound && enclosing.isDynamic())
    if (auto tape = planGlobalTape(forOp))
      return chosen(std::move(tape), 0);
  // Memory the loop overwrites and reads, small enough to snapshot with the
  // state: checkpointing with those buffers in the snapshots.
  SmallVector<Value> memories;
  int64_t memoryBytes = 0;
  if (obstacle) {
    memories = findSnapshotMemories(loop);
    for (Value m : memories) {
      auto type = cast<MemRefType>(m.getType());
      memoryBytes +=
          type.getNumElements() * privateSlotBytes(type.getElementType());
    }
    llvm::DenseSet<Value> snapshotted(memories.begin(), memories.end());
    bool snapshottable = !memories.empty() &&
                         !findCheckpointObstacle(loop, snapshotted) &&
                         !holdsUntapeableLoop(loop);
    // A block's tiles: every step's snapshot in the global tape, each
    // thread its share (a private snapshot would hold the whole tile).
    if (snapshottable && forOp && !loop->hasAttr(kCheckpointsAttrName))
      if (auto strategy = planStepSnapshots(forOp, memories))
        return chosen(std::move(strategy), 0);
    if (snapshottable && memoryBytes <= kMemorySnapshotBudget) {
      if (!loop->hasAttr(kCheckpointsAttrName))
        snapshots = std::clamp<int64_t>(kMemorySnapshotBudget / memoryBytes,
                                        1, snapshots);
      auto strategy = std::make_unique<CheckpointStrategy>(snapshots);
      strategy->memories = std::move(memories);
      return chosen(std::move(strategy),
                    (stateBytes + memoryBytes) * snapshots);
    }
  }
  // The last resort: the values the iterations read, in global memory
  // sized when the kernel is launched.
  // (A while inside is then taped there too, its steps per iteration in a
  // growing tape.)
  if (obstacle && forOp && (!bound || holdsWhile)) {
    if (auto tape = planGlobalTape(forOp))
      return chosen(std::move(tape), 0);
    // Bounds known only when the loop starts: a tape that grows.
    if (auto tape = planGrowingTape(forOp))
      return chosen(std::move(tape), 0);
  }
  // A while loop's steps, in a tape that grows with them.
  if (obstacle && !forOp)
    if (auto tape = planWhileTape(cast<scf::WhileOp>(loop)))
      return chosen(std::move(tape), 0);
  if (obstacle) {
    InFlightDiagnostic diag = loop->emitOpError(
        "cannot be reversed: its iterations cannot be recomputed from "
        "checkpoints, because an op in it reads memory that the loop, later "
        "code or an enclosing loop overwrites");
    diag.attachNote(obstacle->getLoc()) << "this op's read is not repeatable";
    if (forOp)
      diag.attachNote()
          << "a trip count computable from the function's arguments (a "
             "global-memory tape sized at launch), or a static bound lets the "
             "loop be taped instead: constant bounds, or the hint "
          << kMaxTripCountAttrName
          << " = N on the loop (a per-thread tape of N slots, checked when "
             "the kernel runs)";
    return nullptr;
  }
  auto strategy = std::make_unique<CheckpointStrategy>(snapshots);
  strategy->restartable = forOp && forOp.getInitArgs().empty();
  int64_t bytes = strategy->restartable ? 0 : stateBytes * snapshots;
  return chosen(std::move(strategy), bytes);
}

std::unique_ptr<LoopStrategy> VJPEmitter::planSplitLoop(Operation *loop) {
  auto forOp = dyn_cast<scf::ForOp>(loop);
  if (!forOp) {
    loop->emitOpError(
        "cannot be reversed in split mode: a while loop is only checkpointed, "
        "which recomputes it from memory the reverse kernel does not have "
        "(a counted loop, `for (i = a; i < n; i += c)`, is taped)");
    return nullptr;
  }
  auto chosen = [&](std::unique_ptr<LoopStrategy> strategy) {
    if (auto *tape = dyn_cast<TapeStrategy>(strategy.get()))
      tape->split = true;
    if (remarks)
      strategy->remark(loop, 0);
    return strategy;
  };
  // Preaccumulation keeps nothing but its Jacobian (global in split mode).
  if (!recomputeRoot && !loop->hasAttr(kCheckpointsAttrName) &&
      !staticTripCount(forOp)) {
    auto plan = std::make_unique<PreaccumulationStrategy>();
    if (canPreaccumulate(forOp, *plan))
      return chosen(std::move(plan));
  }
  std::optional<int64_t> bound = staticTripCount(forOp);
  if (!bound)
    if (auto hint = loop->getAttrOfType<IntegerAttr>(kMaxTripCountAttrName))
      bound = hint.getInt();
  if (bound) {
    auto tape = std::make_unique<TapeStrategy>();
    collectTaped(forOp, tape->taped, tape->recomputed);
    tape->global = true;
    tape->bound = *bound;
    tape->hinted = !staticTripCount(forOp);
    return chosen(std::move(tape));
  }
  if (auto tape = planGlobalTape(forOp))
    return chosen(std::move(tape));
  loop->emitOpError("cannot be reversed in split mode: its trip count is not "
                    "computable from the function's arguments when it starts "
                    "(give the loop the hint ")
      << kMaxTripCountAttrName << " = N)";
  return nullptr;
}

bool VJPEmitter::boundsKnownAtEntry(scf::ForOp op) {
  return !recomputeRoot &&
         hoistToEntry(fwd.lookupOrNull(op.getLowerBound())) &&
         hoistToEntry(fwd.lookupOrNull(op.getUpperBound())) &&
         hoistToEntry(fwd.lookupOrNull(op.getStep()));
}

std::unique_ptr<TapeStrategy> VJPEmitter::planGlobalTape(scf::ForOp op) {
  // Slots at the derivative function's entry: not while recomputing
  // iterations of a checkpointed loop (its local sweep).
  if (recomputeRoot)
    return nullptr;
  Value lb = hoistToEntry(fwd.lookupOrNull(op.getLowerBound()));
  Value ub = hoistToEntry(fwd.lookupOrNull(op.getUpperBound()));
  Value step = hoistToEntry(fwd.lookupOrNull(op.getStep()));
  Value count;
  bool largest = false;
  if (lb && ub && step) {
    OpBuilder::InsertionGuard guard(b);
    setInsertionPointAtEntry();
    count = emitTripCount(op.getLoc(), lb, ub, step);
    hoistAnchor = count.getDefiningOp();
  } else if (step) {
    // A triangular nest: each enclosing iteration's slots are the largest
    // trip count's.
    count = maxTripCountAtEntry(op);
    largest = true;
  }
  if (!count)
    return nullptr;
  auto tape = std::make_unique<TapeStrategy>();
  collectTaped(op, tape->taped, tape->recomputed);
  tape->global = true;
  tape->dynamicBound = count;
  tape->largest = largest;
  return tape;
}

std::unique_ptr<TapeStrategy> VJPEmitter::planGrowingTape(scf::ForOp op) {
  if (recomputeRoot || !hoistToEntry(fwd.lookupOrNull(op.getStep())))
    return nullptr;
  auto tape = std::make_unique<TapeStrategy>();
  collectTaped(op, tape->taped, tape->recomputed);
  tape->global = true;
  tape->growing = true;
  OpBuilder::InsertionGuard guard(b);
  setInsertionPointAtEntry();
  tape->dynamicBound = TapeCapacityOp::create(b, op.getLoc(), b.getIndexType());
  hoistAnchor = tape->dynamicBound.getDefiningOp();
  return tape;
}

LogicalResult VJPEmitter::forwardFor(scf::ForOp op) {
  std::unique_ptr<LoopStrategy> strategy = planLoop(op);
  if (!strategy)
    return failure();
  LoopStrategy &chosen = *strategy;
  loopPlans[op] = std::move(strategy);
  return chosen.forward(*this, op);
}

LogicalResult VJPEmitter::reverseFor(scf::ForOp op, AdjointScope &outer) {
  return loopPlans[op]->reverse(*this, op, outer);
}

LogicalResult nabla::hooks::reverseSweepFor(ReverseEmitter &emitter,
                                            scf::ForOp op) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  if (vjp.loopPlans.count(op))
    return vjp.reverseFor(op, *vjp.scope);
  return emitter.isActive(op) ? emitter.unsupported(op) : success();
}

LogicalResult nabla::hooks::reverseSweepWhile(ReverseEmitter &emitter,
                                              scf::WhileOp op) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  auto plan = vjp.loopPlans.find(op);
  if (plan != vjp.loopPlans.end()) {
    if (auto *tree = dyn_cast<ReductionTreeStrategy>(plan->second.get()))
      return tree->reverseTree(vjp, op);
    if (auto *tape = dyn_cast<WhileTapeStrategy>(plan->second.get()))
      return vjp.reverseTapedWhile(op, *tape, *vjp.scope);
  }
  if (vjp.whileCounts.count(op))
    return vjp.reverseWhile(op, *vjp.scope);
  return emitter.isActive(op) ? emitter.unsupported(op) : success();
}
