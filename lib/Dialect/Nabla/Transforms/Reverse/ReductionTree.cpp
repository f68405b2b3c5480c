//===- ReductionTree.cpp - A block's reduction tree, reversed as one ------===//
//
// The reduction-tree strategy (LoopStrategies.h). The primal
//
//   for (s = s_0; s > 0; s >>= 1) {            // scf.for, constant strides,
//     if (t < s) W[t] = W[t] + W[t + s]        // or clang's scf.while of a
//     barrier                                  // run-time s_0 (blockDim / 2)
//   }
//
// (t a thread id) adds into W[0] every element whose path reaches it: at
// stride s, the value at position p in [s, 2s) is added into p - s when
// thread p - s exists (p - s < T, the block's size along t's dimension), and
// stays at p too, where no later, smaller stride moves it again. So each
// element reaches the root along at most one path, and every other element
// keeps its value or holds a partial sum. When W[0] alone is read after the
// tree (and W is a kernel attribution, whose shadow holds no other adjoint),
// the transpose of this linear map gives every element on a path to the
// root the root's adjoint and changes nothing else:
//
//   barrier                                  // the root's adjoint is final
//   g = dW[0]
//   for j = t; j < 2 s_0; j += T:  if (j != 0 && path(j) ends at 0) dW[j] += g
//
// Exact for every block size and first stride (the same path test the
// primal's guards make), deterministic (no atomics), and it needs no primal
// value, so the forward sweep's tree is dead when nothing else reads it
// (UnreadAttributions.h). This is the adjoint of a reduction with + in
// Futhark's reverse-mode rules (Schenck et al., "AD for an array language
// with nested parallelism", SC'22): the result's adjoint broadcast to the
// operands.
//
// A max or min tree (`W[t] = max(W[t], W[t + s])`, maxnumf/minimumf/...)
// is reversed by the same rule for a reduction with max: every position's
// final value is the value of one element, the winner of its last merge, so
// its adjoint goes to that element alone. The forward sweep runs the tree
// with each position's winner alongside, as a float in W's shadow (zero and
// unused until the reverse sweep; a merge keeps the first operand's winner
// under the derivative rule's comparison, so ties and NaNs go where the
// stepwise reversal sends them), keeps the winners of the thread's positions
// in the global tape and zeroes the shadow again. The reverse sweep moves
// each position's adjoint to its winner (read and cleared, a barrier, atomic
// adds: positions may share a winner). Whatever is read after the tree, at
// the root or elsewhere, is routed exactly.
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace nabla;

/// The most steps a tree of constant strides may have (2^31 .. 1).
static constexpr int64_t kMaxTreeSteps = 32;

/// The value of index expression `v` when the loop's induction variable `iv`
/// is `ivValue`: constants, the induction variable, and integer arithmetic
/// on them.
static std::optional<int64_t> evaluate(Value v, Value iv, int64_t ivValue,
                                       int depth = 0) {
  if (v == iv)
    return ivValue;
  if (depth > 16)
    return std::nullopt;
  if (std::optional<int64_t> constant = getConstantIntValue(v))
    return constant;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
          arith::ExtSIOp, arith::TruncIOp>(def))
    return evaluate(def->getOperand(0), iv, ivValue, depth + 1);
  if (def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> x = evaluate(def->getOperand(0), iv, ivValue,
                                      depth + 1);
  std::optional<int64_t> y = evaluate(def->getOperand(1), iv, ivValue,
                                      depth + 1);
  if (!x || !y || *x < 0 || *y < 0 || *x > (int64_t(1) << 40) ||
      *y > (int64_t(1) << 40))
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return *x + *y;
  if (isa<arith::SubIOp>(def))
    return *x - *y;
  if (isa<arith::MulIOp>(def))
    return *x * *y;
  if (isa<arith::DivUIOp, arith::DivSIOp>(def))
    return *y ? std::optional<int64_t>(*x / *y) : std::nullopt;
  if (isa<arith::ShRUIOp, arith::ShRSIOp>(def))
    return *y < 63 ? std::optional<int64_t>(*x >> *y) : std::nullopt;
  if (isa<arith::ShLIOp>(def))
    return *y < 24 ? std::optional<int64_t>(*x << *y) : std::nullopt;
  return std::nullopt;
}

/// True if `user` runs after `loop` in program order (not inside it).
static bool runsAfter(Operation *user, Operation *loop) {
  for (Operation *at = loop; at && !isa<FunctionOpInterface>(at);
       at = at->getParentOp()) {
    Operation *ancestor = at->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor)
      continue;
    return ancestor != at && at->isBeforeInBlock(ancestor);
  }
  return false;
}

namespace {
/// One step of a tree: `if (t < s) W[t] = W[t] + W[t + s]` (or max, min)
/// then a barrier.
struct TreeStep {
  Value buffer;
  gpu::ThreadIdOp thread;
  /// The combining op (arith.addf, maximumf, maxnumf, minimumf, minnumf)
  /// and the load of the thread's own element W[t].
  Operation *combiner = nullptr;
  memref::LoadOp own;
};
} // namespace

/// The comparison under which a max/min tree's combiner keeps its first
/// operand (the derivative rule's: DerivativeRules.cpp), or none for a sum.
static std::optional<arith::CmpFPredicate> selectionPredicate(Operation *op) {
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return arith::CmpFPredicate::OGE;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return arith::CmpFPredicate::OLE;
  return std::nullopt;
}

/// Matches the step in `body` (a loop's body block; `stride` the step's
/// stride there): memory-free ops, the guarded update, then one barrier,
/// nothing else with effects.
static std::optional<TreeStep> matchStep(Block &body, Value stride,
                                         Operation *loop) {
  scf::IfOp guard;
  gpu::BarrierOp barrier;
  for (Operation &inner : body.without_terminator()) {
    if (auto ifOp = dyn_cast<scf::IfOp>(inner)) {
      if (guard)
        return std::nullopt;
      guard = ifOp;
    } else if (auto b = dyn_cast<gpu::BarrierOp>(inner)) {
      if (barrier)
        return std::nullopt;
      barrier = b;
    } else if (inner.getNumRegions() || !isMemoryEffectFree(&inner)) {
      return std::nullopt;
    }
  }
  // One barrier per step, before the update (llm.c's form) or after it.
  if (!guard || !barrier || guard->getNumResults() ||
      (!guard.getElseRegion().empty() &&
       !llvm::hasSingleElement(guard.getElseRegion().front())))
    return std::nullopt;
  auto cond = guard.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cond || (cond.getPredicate() != arith::CmpIPredicate::ult &&
                cond.getPredicate() != arith::CmpIPredicate::slt) ||
      cond.getRhs() != stride)
    return std::nullopt;
  Value threadValue = cond.getLhs();
  auto thread = stripIntegerCasts(threadValue).getDefiningOp<gpu::ThreadIdOp>();
  if (!thread || loop->isAncestor(thread))
    return std::nullopt;

  // The then-block: W[t] = W[t] + W[t + s] (indices through casts), or
  // max/min.
  arith::AddIOp partnerIndex;
  Operation *sum = nullptr;
  memref::StoreOp store;
  SmallVector<memref::LoadOp> loads;
  for (Operation &inner : guard.thenBlock()->without_terminator()) {
    if (auto add = dyn_cast<arith::AddIOp>(inner); add && !partnerIndex)
      partnerIndex = add;
    else if (isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp,
                 arith::MinimumFOp, arith::MinNumFOp>(inner) &&
             !sum)
      sum = &inner;
    else if (auto s = dyn_cast<memref::StoreOp>(inner); s && !store)
      store = s;
    else if (auto load = dyn_cast<memref::LoadOp>(inner);
             load && loads.size() < 2)
      loads.push_back(load);
    else if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
                  arith::ExtSIOp>(inner))
      return std::nullopt;
  }
  if (!partnerIndex || !sum || !store || loads.size() != 2)
    return std::nullopt;
  auto isPair = [](Value a, Value b, Value x, Value y) {
    return (a == x && b == y) || (a == y && b == x);
  };
  auto isThread = [&](Value index) {
    return stripIntegerCasts(index) == thread.getResult();
  };
  Value buffer = store.getMemRef();
  if (store.getIndices().size() != 1 ||
      !isPair(stripIntegerCasts(partnerIndex.getLhs()),
              stripIntegerCasts(partnerIndex.getRhs()), thread.getResult(),
              stripIntegerCasts(stride)) ||
      store.getValueToStore() != sum->getResult(0) ||
      !isThread(store.getIndices().front()) ||
      !isPair(sum->getOperand(0), sum->getOperand(1), loads[0], loads[1]))
    return std::nullopt;
  memref::LoadOp own = loads[0], partner = loads[1];
  if (!isThread(own.getIndices().front()))
    std::swap(own, partner);
  if (own.getMemRef() != buffer || partner.getMemRef() != buffer ||
      !isThread(own.getIndices().front()) ||
      stripIntegerCasts(partner.getIndices().front()) != partnerIndex.getResult())
    return std::nullopt;
  return TreeStep{buffer, thread, sum, own};
}

/// True if `next` is `stride` halved (shrui by 1, divui by 2).
static bool isHalved(Value next, Value stride) {
  Operation *def = next.getDefiningOp();
  if (!def || def->getNumOperands() != 2 || def->getOperand(0) != stride)
    return false;
  APInt by;
  if (!matchPattern(def->getOperand(1), m_ConstantInt(&by)))
    return false;
  return (isa<arith::ShRUIOp>(def) && by == 1) ||
         (isa<arith::DivUIOp>(def) && by == 2);
}

/// True if `cond` tests that the halved stride `next` (of `stride`) is
/// positive.
static bool testsPositive(Value cond, Value next, Value stride) {
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  APInt bound;
  if (!matchPattern(cmp.getRhs(), m_ConstantInt(&bound)))
    return false;
  arith::CmpIPredicate p = cmp.getPredicate();
  using P = arith::CmpIPredicate;
  if (cmp.getLhs() == next)
    return bound.isZero() && (p == P::ne || p == P::ugt || p == P::sgt);
  if (cmp.getLhs() == stride)
    return (bound == 1 && (p == P::ugt || p == P::sgt)) ||
           (bound == 2 && (p == P::uge || p == P::sge));
  return false;
}

std::unique_ptr<ReductionTreeStrategy>
ReductionTreeStrategy::match(Operation *loop,
                             const llvm::DenseSet<Value> &attributions) {
  if (loop->getNumResults() > 1)
    return nullptr;
  for (Operation *parent = loop->getParentOp();
       parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp())
    if (isa<LoopLikeOpInterface>(parent))
      return nullptr;
  auto plan = std::make_unique<ReductionTreeStrategy>();
  std::optional<TreeStep> step;
  auto forOp = dyn_cast<scf::ForOp>(loop);
  if (forOp && forOp->hasAttr(kHalvingCounterAttrName)) {
    // clang's do-while as reverse mode's preparation counted it
    // (CountedWhileLoops.cpp): the stride, the loop's one value, halves
    // from its initial value down to 1.
    if (forOp.getNumRegionIterArgs() != 1)
      return nullptr;
    Value stride = forOp.getRegionIterArgs().front();
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    if (!isHalved(yield.getOperand(0), stride))
      return nullptr;
    step = matchStep(*forOp.getBody(), stride, loop);
    if (!step)
      return nullptr;
    plan->firstStride = forOp.getInitArgs().front();
  } else if (forOp) {
    std::optional<int64_t> lb = getConstantIntValue(forOp.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(forOp.getUpperBound());
    std::optional<int64_t> by = getConstantIntValue(forOp.getStep());
    if (forOp.getNumResults() || !lb || !ub || !by || *by <= 0 || *ub <= *lb ||
        (*ub - *lb + *by - 1) / *by > kMaxTreeSteps)
      return nullptr;
    auto guard = llvm::find_if(forOp.getBody()->getOperations(),
                               [](Operation &op) { return isa<scf::IfOp>(op); });
    if (guard == forOp.getBody()->end())
      return nullptr;
    auto cond =
        cast<scf::IfOp>(*guard).getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cond)
      return nullptr;
    Value stride = cond.getRhs();
    step = matchStep(*forOp.getBody(), stride, loop);
    if (!step)
      return nullptr;
    // Halving strides s_0 >> k, down to at least 1.
    int64_t steps = (*ub - *lb + *by - 1) / *by;
    for (int64_t k = 0; k < steps; ++k) {
      std::optional<int64_t> s =
          evaluate(stride, forOp.getInductionVar(), *lb + k * *by);
      if (!s || *s < 1)
        return nullptr;
      plan->strides.push_back(*s);
    }
    int64_t first = plan->strides.front();
    auto type = cast<MemRefType>(step->buffer.getType());
    if (!llvm::isPowerOf2_64(first) || !type.hasStaticShape() ||
        2 * first > type.getDimSize(0))
      return nullptr;
    for (auto [k, s] : llvm::enumerate(plan->strides))
      if (s != first >> k)
        return nullptr;
  } else if (auto whileOp = dyn_cast<scf::WhileOp>(loop)) {
    // clang's do-while: the before region is the step, the stride halves
    // and the loop goes on while it is positive; the after region only
    // passes it back.
    Block &before = whileOp.getBefore().front();
    Block &after = whileOp.getAfter().front();
    auto yield = dyn_cast<scf::YieldOp>(after.getTerminator());
    scf::ConditionOp condition = whileOp.getConditionOp();
    if (whileOp.getInits().size() != 1 || before.getNumArguments() != 1 ||
        !isa<IntegerType, IndexType>(before.getArgument(0).getType()) ||
        !llvm::hasSingleElement(after) || !yield ||
        yield.getNumOperands() != 1 ||
        yield.getOperand(0) != after.getArgument(0) ||
        condition.getArgs().size() != 1)
      return nullptr;
    Value stride = before.getArgument(0);
    Value next = condition.getArgs().front();
    if (!isHalved(next, stride) ||
        !testsPositive(condition.getCondition(), next, stride))
      return nullptr;
    step = matchStep(before, stride, loop);
    if (!step)
      return nullptr;
    plan->firstStride = whileOp.getInits().front();
  } else {
    return nullptr;
  }
  auto type = dyn_cast<MemRefType>(step->buffer.getType());
  auto space = type ? dyn_cast_or_null<gpu::AddressSpaceAttr>(
                          type.getMemorySpace())
                    : nullptr;
  if (!type || type.getRank() != 1 || !isa<FloatType>(type.getElementType()) ||
      !space || space.getValue() != gpu::AddressSpace::Workgroup ||
      !attributions.contains(step->buffer))
    return nullptr;

  plan->buffer = step->buffer;
  plan->dimension = step->thread.getDimension();
  // A max/min tree: each position's final value is one element's, whose
  // index the forward sweep tracks (as a float in W's shadow, exact below
  // 2^mantissa); every position's adjoint goes to its winner, so what is
  // read after the tree does not matter.
  if ((plan->selection = selectionPredicate(step->combiner))) {
    unsigned mantissa =
        cast<FloatType>(type.getElementType()).getFPMantissaWidth();
    if (!type.hasStaticShape() || mantissa >= 64 ||
        type.getDimSize(0) > (int64_t(1) << mantissa))
      return nullptr;
    plan->combiner = step->combiner;
    plan->own = step->own.getResult();
    return plan;
  }

  // After the tree, W[0] alone is read (stores only take adjoints away),
  // and no view of W taken anywhere is used.
  SmallVector<Value> aliases = {step->buffer};
  for (unsigned k = 0; k < aliases.size(); ++k)
    for (Operation *user : aliases[k].getUsers())
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == aliases[k])
        llvm::append_range(aliases, user->getResults());
  for (Value alias : aliases)
    for (Operation *user : alias.getUsers()) {
      if (loop->isAncestor(user) ||
          (!runsAfter(user, loop) && !isa<ViewLikeOpInterface>(user)))
        continue;
      if (alias != step->buffer)
        return nullptr;
      if (auto s = dyn_cast<memref::StoreOp>(user);
          s && s.getMemRef() == alias && s.getValueToStore() != alias)
        continue;
      auto load = dyn_cast<memref::LoadOp>(user);
      if (!load || !matchPattern(load.getIndices().front(), m_Zero()))
        return nullptr;
    }
  return plan;
}

/// Emits `body(k, j)` for the thread's positions j = thread + k * threads
/// inside the buffer's `size` elements (a loop over j to a constant bound:
/// one nabla-detect-loop-limit can bound).
static void
forEachPosition(OpBuilder &b, Location loc, Value thread, Value threads,
                int64_t size,
                function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  scf::ForOp::create(
      b, loc, thread, arith::ConstantIndexOp::create(b, loc, size), threads,
      ValueRange{}, [&](OpBuilder &nb, Location l, Value j, ValueRange) {
        Value k = arith::DivUIOp::create(
            nb, l, arith::SubIOp::create(nb, l, j, thread), threads);
        body(nb, l, k, j);
        scf::YieldOp::create(nb, l);
      });
}

LogicalResult ReductionTreeStrategy::forwardTree(VJPEmitter &emitter,
                                                 Operation *loop) {
  if (selection)
    return forwardSelectionTree(emitter, loop);
  if (auto forOp = dyn_cast<scf::ForOp>(loop);
      forOp && !forOp->hasAttr(kHalvingCounterAttrName))
    return emitter.forwardCheckpointedFor(forOp);
  Operation *clone = emitter.builder().clone(*loop, emitter.fwd);
  for (auto [src, dst] : llvm::zip(loop->getResults(), clone->getResults()))
    emitter.setPrimal(src, dst);
  return success();
}

LogicalResult ReductionTreeStrategy::forwardSelectionTree(VJPEmitter &emitter,
                                                          Operation *loop) {
  OpBuilder &b = emitter.builder();
  Location loc = loop->getLoc();
  Value shadow = emitter.shadow(buffer);
  auto type = cast<MemRefType>(buffer.getType());
  Type element = type.getElementType();
  int64_t size = type.getDimSize(0);
  if (!shadow)
    return emitter.unsupported(loop);
  // The slots, at the entry: the thread's positions' winners and moved
  // adjoints.
  {
    OpBuilder::InsertionGuard guard(b);
    emitter.setInsertionPointAtEntry();
    Value threads = gpu::BlockDimOp::create(b, loc, dimension);
    share = emitShareOf(b, loc, arith::ConstantIndexOp::create(b, loc, size),
                        threads);
    winners = createGlobalSlots(b, loc, b.getI32Type(), share);
    moved = createGlobalSlots(b, loc, element, share);
    if (!moved)
      return emitter.unsupported(loop);
    emitter.hoistAnchor = moved.getDefiningOp();
  }
  Value thread = gpu::ThreadIdOp::create(b, loc, dimension);
  Value threads = gpu::BlockDimOp::create(b, loc, dimension);
  // Each position is its own winner before the tree.
  forEachPosition(b, loc, thread, threads, size,
                  [&](OpBuilder &nb, Location l, Value, Value j) {
                    Value f =
                        arith::UIToFPOp::create(nb, l, element,
                                                arith::IndexCastUIOp::create(
                                                    nb, l, nb.getI32Type(), j));
                    memref::StoreOp::create(nb, l, f, shadow, j);
                  });
  gpu::BarrierOp::create(b, loc);
  // The tree, each merge also keeping its winner's index: the combiner's
  // first operand's when the derivative rule keeps the first.
  Operation *clone = b.clone(*loop, emitter.fwd);
  for (auto [src, dst] : llvm::zip(loop->getResults(), clone->getResults()))
    emitter.setPrimal(src, dst);
  Operation *merge = emitter.fwd.lookup(combiner->getResult(0)).getDefiningOp();
  auto ownLoad = emitter.fwd.lookup(own).getDefiningOp<memref::LoadOp>();
  auto firstLoad = merge->getOperand(0).getDefiningOp<memref::LoadOp>();
  auto secondLoad = merge->getOperand(1).getDefiningOp<memref::LoadOp>();
  if (!ownLoad || !firstLoad || !secondLoad)
    return emitter.unsupported(loop);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(merge);
    Location l = merge->getLoc();
    Value first = memref::LoadOp::create(b, l, shadow, firstLoad.getIndices());
    Value second =
        memref::LoadOp::create(b, l, shadow, secondLoad.getIndices());
    Value keep = arith::CmpFOp::create(b, l, *selection, merge->getOperand(0),
                                       merge->getOperand(1));
    memref::StoreOp::create(b, l,
                            arith::SelectOp::create(b, l, keep, first, second),
                            shadow, ownLoad.getIndices());
  }
  // Keep the thread's positions' winners; W's shadow is zero again before
  // anything else uses it.
  gpu::BarrierOp::create(b, loc);
  forEachPosition(
      b, loc, thread, threads, size,
      [&](OpBuilder &nb, Location l, Value k, Value j) {
        Value winner = memref::LoadOp::create(nb, l, shadow, j);
        storePrivateSlot(
            nb, l, arith::FPToUIOp::create(nb, l, nb.getI32Type(), winner),
            winners, k);
        memref::StoreOp::create(nb, l, createZero(nb, l, element), shadow, j);
      });
  gpu::BarrierOp::create(b, loc);
  return success();
}

LogicalResult ReductionTreeStrategy::reverseSelectionTree(VJPEmitter &emitter,
                                                          Operation *loop) {
  OpBuilder &b = emitter.builder();
  Location loc = loop->getLoc();
  Value shadow = emitter.shadow(buffer);
  if (!shadow || !winners)
    return emitter.unsupported(loop);
  auto type = cast<MemRefType>(buffer.getType());
  Type element = type.getElementType();
  int64_t size = type.getDimSize(0);
  Value thread = gpu::ThreadIdOp::create(b, loc, dimension);
  Value threads = gpu::BlockDimOp::create(b, loc, dimension);
  auto winnerOf = [&](OpBuilder &nb, Location l, Value k) -> Value {
    return arith::IndexCastUIOp::create(
        nb, l, nb.getIndexType(),
        loadPrivateSlot(nb, l, winners, k, nb.getI32Type()));
  };
  // Every adjoint of W's final values is in. A position that is not its
  // own winner gives its adjoint away...
  gpu::BarrierOp::create(b, loc);
  forEachPosition(
      b, loc, thread, threads, size,
      [&](OpBuilder &nb, Location l, Value k, Value j) {
        Value away = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne,
                                           winnerOf(nb, l, k), j);
        Value g = memref::LoadOp::create(nb, l, shadow, j);
        Value zero = createZero(nb, l, element);
        storePrivateSlot(nb, l, arith::SelectOp::create(nb, l, away, g, zero),
                         moved, k);
        memref::StoreOp::create(
            nb, l, arith::SelectOp::create(nb, l, away, zero, g), shadow, j);
      });
  // ... to its winner, once every position has been read (several
  // positions can share a winner: an atomic add).
  gpu::BarrierOp::create(b, loc);
  forEachPosition(
      b, loc, thread, threads, size,
      [&](OpBuilder &nb, Location l, Value k, Value) {
        Value g = loadPrivateSlot(nb, l, moved, k, element);
        Value some = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE, g,
                                           createZero(nb, l, element));
        auto give = scf::IfOp::create(nb, l, some, /*withElseRegion=*/false);
        OpBuilder then = give.getThenBodyBuilder();
        memref::AtomicRMWOp::create(then, l, arith::AtomicRMWKind::addf, g,
                                    shadow, ValueRange{winnerOf(then, l, k)});
      });
  gpu::BarrierOp::create(b, loc);
  return success();
}

/// Moves `position` (index) one step of stride `stride` towards the root:
/// returns (new position, still reachable).
static std::pair<Value, Value> stepTowardsRoot(OpBuilder &b, Location loc,
                                               Value position, Value stride,
                                               Value threads) {
  using P = arith::CmpIPredicate;
  Value moved = arith::SubIOp::create(b, loc, position, stride);
  Value atOrPast =
      arith::CmpIOp::create(b, loc, P::uge, position, stride);
  // It moves when thread p - s exists and takes part (p - s < s); a value
  // at or past the stride that cannot move now never does.
  Value canMove = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, P::ult, moved, stride),
      arith::CmpIOp::create(b, loc, P::ult, moved, threads));
  Value yes = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  Value below = arith::XOrIOp::create(b, loc, atOrPast, yes);
  Value reachable = arith::OrIOp::create(b, loc, below, canMove);
  Value next = arith::SelectOp::create(b, loc, atOrPast, moved, position);
  return {next, reachable};
}

LogicalResult ReductionTreeStrategy::reverseTree(VJPEmitter &emitter,
                                                 Operation *loop) {
  if (selection)
    return reverseSelectionTree(emitter, loop);
  OpBuilder &b = emitter.builder();
  Location loc = loop->getLoc();
  Value shadow = emitter.shadow(buffer);
  if (!shadow)
    return emitter.unsupported(loop);
  Type index = b.getIndexType();
  Value thread = gpu::ThreadIdOp::create(b, loc, dimension);
  Value threads = gpu::BlockDimOp::create(b, loc, dimension);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value first;
  if (firstStride) {
    first = emitter.primal(firstStride);
    if (!first)
      return emitter.unsupported(loop);
    if (first.getType() != index)
      first = arith::IndexCastUIOp::create(b, loc, index, first);
  } else {
    first = arith::ConstantIndexOp::create(b, loc, strides.front());
  }
  // Every contribution to the root's adjoint is in.
  gpu::BarrierOp::create(b, loc);
  Value seed = memref::LoadOp::create(b, loc, shadow, zero);
  Value end = arith::ShLIOp::create(b, loc, first, one);
  // With strides halving from a power of two and a thread for every merge
  // (2 s_0 <= T), every element below 2 s_0 reaches the root: the path test
  // is skipped (a branch uniform across the block).
  Value everyPath =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end, threads);
  if (firstStride)
    everyPath = arith::AndIOp::create(
        b, loc, everyPath,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::AndIOp::create(b, loc, first,
                                  arith::SubIOp::create(b, loc, first, one)),
            zero));
  scf::ForOp::create(
      b, loc, thread, end, threads, ValueRange{},
      [&](OpBuilder &nb, Location l, Value j, ValueRange) {
        Type i1 = nb.getI1Type();
        auto test = scf::IfOp::create(nb, l, TypeRange{i1}, everyPath,
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(nb);
          nb.setInsertionPointToStart(test.thenBlock());
          scf::YieldOp::create(
              nb, l, ValueRange{arith::ConstantIntOp::create(nb, l, i1, 1)});
          nb.setInsertionPointToStart(test.elseBlock());
          Value onPath = pathReachesRoot(nb, l, j, first, threads);
          scf::YieldOp::create(nb, l, ValueRange{onPath});
        }
        Value notRoot =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne, j, zero);
        Value add = arith::AndIOp::create(nb, l, test.getResult(0), notRoot);
        auto ifOp = scf::IfOp::create(nb, l, add, /*withElseRegion=*/false);
        {
          OpBuilder::InsertionGuard guard(nb);
          nb.setInsertionPointToStart(ifOp.thenBlock());
          Value old = memref::LoadOp::create(nb, l, shadow, j);
          memref::StoreOp::create(
              nb, l, arith::AddFOp::create(nb, l, old, seed), shadow, j);
        }
        scf::YieldOp::create(nb, l);
      });
  // Every thread has read the seed and added it before the code reversed
  // next takes the root's adjoint away or reads another thread's element (a
  // tree whose barrier opens each step has none replayed after it: thread
  // 0 zeroed the root's adjoint while other subgroups had yet to read it).
  gpu::BarrierOp::create(b, loc);
  return success();
}

Value ReductionTreeStrategy::pathReachesRoot(OpBuilder &b, Location loc,
                                             Value j, Value first,
                                             Value threads) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value position = j;
  Value reaches = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  if (!firstStride) {
    for (int64_t s : strides) {
      auto [next, ok] = stepTowardsRoot(
          b, loc, position, arith::ConstantIndexOp::create(b, loc, s), threads);
      position = next;
      reaches = arith::AndIOp::create(b, loc, reaches, ok);
    }
  } else {
    // for (s = s_0; s > 0; s >>= 1)
    SmallVector<Type> types = {b.getIndexType(), b.getIndexType(),
                               b.getI1Type()};
    auto walk = scf::WhileOp::create(b, loc, types,
                                     ValueRange{first, position, reaches});
    SmallVector<Location> locs(3, loc);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *check = b.createBlock(&walk.getBefore(), {}, types, locs);
      scf::ConditionOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                check->getArgument(0), zero),
          check->getArguments());
      Block *body = b.createBlock(&walk.getAfter(), {}, types, locs);
      auto [next, ok] = stepTowardsRoot(b, loc, body->getArgument(1),
                                        body->getArgument(0), threads);
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::ShRUIOp::create(b, loc, body->getArgument(0), one),
                     next,
                     arith::AndIOp::create(b, loc, body->getArgument(2), ok)});
    }
    position = walk.getResult(1);
    reaches = walk.getResult(2);
  }
  Value atRoot =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, position, zero);
  return arith::AndIOp::create(b, loc, reaches, atRoot);
}

void ReductionTreeStrategy::remark(Operation *loop, int64_t) const {
  if (selection) {
    loop->emitRemark()
        << "loop reversed as a reduction: a "
        << (*selection == arith::CmpFPredicate::OGE ? "max" : "min")
        << " tree in workgroup memory whose merges' winners the forward sweep "
           "tracks; each position's adjoint goes to its winner (no reversed "
           "steps, no taped operands)";
    return;
  }
  InFlightDiagnostic diag = loop->emitRemark()
                            << "loop reversed as a reduction: a sum tree of ";
  if (firstStride)
    diag << "twice its first stride";
  else
    diag << 2 * strides.front();
  diag << " elements in workgroup memory whose root alone is read after it; "
          "its adjoint is a broadcast of the root's (one barrier, no atomics, "
          "no tape)";
}
