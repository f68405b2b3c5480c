//===- ReverseMode.cpp - Reverse-mode derivative emission -----------------===//
//
// VJPEmitter emits a forward sweep (the primal, caching what the reverse sweep
// needs: scf.if results, per-thread loop tapes) and then the reverse sweep of
// adjoints, mirrored op by op, with GPU-correct accumulation into shadows.
//
//===----------------------------------------------------------------------===//

#include "ReverseMode.h"

#include "ActivityAnalysis.h"
#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "RecordShadows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace nabla;

namespace {
//===----------------------------------------------------------------------===//
// Reverse mode
//===----------------------------------------------------------------------===//

/// Adjoint contributions gathered in one region of the reverse sweep.
struct AdjointScope {
  DenseMap<Value, Value> adjoints; // src value → accumulated adjoint

  void add(OpBuilder &b, Location loc, Value src, Value adjoint) {
    if (!adjoint)
      return;
    Value &slot = adjoints[src];
    slot = addDerivatives(b, loc, slot, adjoint);
  }
  Value get(Value src) const { return adjoints.lookup(src); }
};

class VJPEmitter {
public:
  VJPEmitter(OpBuilder &builder, const Activities &act, bool remarks,
             RuleFinder findRule, RecordShadows &records)
      : b(builder), act(act), remarks(remarks), findRule(std::move(findRule)),
        records(records) {}

  /// src value → forward value available at function scope.
  IRMapping fwd;
  DenseMap<Value, Value> shadow; // src memref → shadow (function scope)

  //--- Forward sweep -------------------------------------------------------//

  /// Views of shadowed buffers taken inside a region, by result.
  DenseMap<Value, Operation *> branchViews;

  /// The shadow of src memref `memref` at the current point: a view taken
  /// inside a region is taken again from its source's shadow.
  Value shadowOf(Value memref) {
    auto it = branchViews.find(memref);
    if (it == branchViews.end())
      return shadow.lookup(memref);
    Operation *view = it->second;
    return cloneViewOfShadow(b, view, fwd, shadowOf(view->getOperand(0)));
  }

  /// Src values defined in the innermost branch being cloned (to cache).
  SmallVector<SmallVector<Value>> branchScopes;

  void defined(Value src, Value forward) {
    fwd.map(src, forward);
    if (!branchScopes.empty())
      branchScopes.back().push_back(src);
  }

  LogicalResult forwardBlock(Block &src) {
    for (Operation &op : src.without_terminator())
      if (failed(forwardOp(&op)))
        return failure();
    return success();
  }

  LogicalResult forwardOp(Operation *op) {
    if (auto ifOp = dyn_cast<scf::IfOp>(op))
      return forwardIf(ifOp);
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && regionTouchesActive(op))
      return forwardFor(loop);
    if (auto loop = dyn_cast<scf::WhileOp>(op); loop && regionTouchesActive(op))
      return forwardWhile(loop);
    if (op->getNumRegions() && !isGPUCollective(op) && regionTouchesActive(op))
      return op->emitOpError("is not supported yet by reverse mode on an "
                             "active path");
    Operation *clone = b.clone(*op, fwd);
    for (auto [src, dst] : llvm::zip(op->getResults(), clone->getResults()))
      defined(src, dst);
    if (auto get = dyn_cast<reloc::GetGlobalOp>(op);
        get && act.isShadowed(get.getResult())) {
      // The reverse sweep runs outside every region: the shadow's use (it has
      // no operands) goes to the entry block.
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(entry);
      shadow[get.getResult()] = records.emitShadow(b, get);
      return success();
    }
    if (auto alloca = dyn_cast<memref::AllocaOp>(op);
        alloca && act.isShadowed(alloca.getResult())) {
      // The reverse sweep needs the shadow after every region closed: inside
      // one it lives at function entry, which needs a static shape.
      OpBuilder::InsertionGuard guard(b);
      if (!branchScopes.empty()) {
        if (!alloca.getType().hasStaticShape())
          return op->emitOpError("is a dynamically sized allocation holding "
                                 "differentiated data inside a region; "
                                 "reverse mode needs its shadow at function "
                                 "level (use a static shape or hoist it)");
        b.setInsertionPointToStart(entry);
      }
      shadow[alloca.getResult()] =
          createZeroedAllocation(b, alloca, mapped(alloca.getDynamicSizes()));
      return success();
    }
    if (isa<ViewLikeOpInterface>(op) && op->getNumOperands() &&
        act.isShadowed(op->getOperand(0))) {
      // Inside a region the shadow's view would not reach the reverse sweep:
      // it is taken there, where each use needs it, from cached operands.
      if (!branchScopes.empty()) {
        branchViews[op->getResult(0)] = op;
        return success();
      }
      shadow[op->getResult(0)] =
          cloneViewOfShadow(b, op, fwd, shadowOf(op->getOperand(0)));
    }
    return success();
  }

  /// Clones an scf.if and yields every value defined in its branches, so
  /// that the reverse sweep can use them after the if.
  LogicalResult forwardIf(scf::IfOp op) {
    Location loc = op.getLoc();
    SmallVector<Value> cached[2];
    Block *blocks[2] = {nullptr, nullptr};
    Region *regions[2] = {&op.getThenRegion(), &op.getElseRegion()};
    // First clone each branch into a detached block to learn what to cache.
    SmallVector<std::unique_ptr<Block>> detached;
    for (int k = 0; k < 2; ++k) {
      detached.push_back(std::make_unique<Block>());
      blocks[k] = detached.back().get();
      if (regions[k]->empty())
        continue;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(blocks[k]);
      branchScopes.emplace_back();
      if (failed(forwardBlock(regions[k]->front())))
        return failure();
      for (Value v : branchScopes.back())
        if (!isa<BaseMemRefType>(v.getType()))
          cached[k].push_back(v);
      branchScopes.pop_back();
    }
    SmallVector<Type> types(op.getResultTypes());
    for (int k = 0; k < 2; ++k)
      for (Value v : cached[k])
        types.push_back(v.getType());
    auto newIf = scf::IfOp::create(b, loc, types, fwd.lookup(op.getCondition()),
                                   /*withElseRegion=*/true);
    for (int k = 0; k < 2; ++k) {
      Block &dst = k == 0 ? newIf.getThenRegion().front()
                          : newIf.getElseRegion().front();
      clearTerminator(dst);
      dst.getOperations().splice(dst.end(), blocks[k]->getOperations());
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(&dst);
      SmallVector<Value> operands;
      if (!regions[k]->empty()) {
        auto yield = cast<scf::YieldOp>(regions[k]->front().getTerminator());
        for (Value v : yield.getOperands())
          operands.push_back(fwd.lookup(v));
      }
      for (int j = 0; j < 2; ++j)
        for (Value v : cached[j])
          operands.push_back(j == k ? fwd.lookup(v)
                                    : createZero(b, loc, v.getType()));
      scf::YieldOp::create(b, loc, operands);
    }
    unsigned next = 0;
    for (Value r : op.getResults())
      defined(r, newIf.getResult(next++));
    for (int k = 0; k < 2; ++k)
      for (Value v : cached[k])
        defined(v, newIf.getResult(next++));
    return success();
  }

  /// True if `op` or anything nested in it touches differentiated data.
  bool regionTouchesActive(Operation *op) {
    bool touches = false;
    op->walk([&](Operation *inner) {
      touches |= touchesActiveData(inner, act);
      return touches ? WalkResult::interrupt() : WalkResult::advance();
    });
    return touches;
  }

  /// Per-loop tapes: every value the loop body defines (iteration's induction
  /// variable, iter_args and results of body ops), one slot per iteration.
  struct LoopTape {
    Value tripCount, lowerBound, step;
    /// The trip count if static, else -1.
    int64_t staticCount = -1;
    SmallVector<std::pair<Value, Value>> tapes; // src value → tape memref
    /// Body ops the reverse loop repeats instead of taping their results
    /// (pure ops, loads of buffers the function never writes), in order.
    SmallVector<Operation *> recomputed;
  };

  /// Bases (through views) of the buffers the differentiated function may
  /// write; loads of the others are repeatable in the reverse sweep.
  DenseSet<Value> writtenBuffers;

  void collectWrittenBuffers(Block &body) {
    body.walk([&](Operation *op) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      SmallVector<MemoryEffects::EffectInstance> list;
      if (effects)
        effects.getEffects(list);
      bool unknown =
          !effects && !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
      for (auto &effect : list)
        if (isa<MemoryEffects::Write>(effect.getEffect())) {
          if (Value v = effect.getValue())
            writtenBuffers.insert(getViewSource(v));
          else
            unknown = true;
        }
      if (unknown)
        for (Value v : op->getOperands())
          if (isa<BaseMemRefType>(v.getType()))
            writtenBuffers.insert(getViewSource(v));
    });
  }

  /// True if the reverse loop can repeat `op` from the values it has (taped
  /// or loop-invariant): a pure op, or a load of a function argument buffer
  /// the function never writes, using no memref defined inside a region.
  bool isRecomputable(Operation *op) {
    if (op->getNumRegions())
      return false;
    for (Value v : op->getOperands())
      if (isa<BaseMemRefType>(v.getType())) {
        auto arg = dyn_cast<BlockArgument>(getViewSource(v));
        if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
          return false;
      }
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return !writtenBuffers.contains(getViewSource(load.getMemRef()));
    return isMemoryEffectFree(op);
  }
  DenseMap<Operation *, LoopTape> loopTapes;
  /// The tape slot of the loops being emitted, outermost first, with the
  /// number of slots so far (-1 when a trip count is dynamic): forward sweep
  /// and reverse sweep.
  SmallVector<std::pair<Value, int64_t>> forwardIterations, reverseIterations;

  /// `iteration` of a loop with `count` iterations, linearized after the
  /// enclosing loops' slot.
  Value linearize(Location loc, ArrayRef<std::pair<Value, int64_t>> enclosing,
                  Value iteration, int64_t count) {
    if (enclosing.empty())
      return iteration;
    Value scale = arith::ConstantIndexOp::create(b, loc, count);
    return arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, enclosing.back().first, scale),
        iteration);
  }
  /// The derivative function's entry block, where tapes are allocated.
  Block *entry = nullptr;

  /// max(0, ceildiv(ub - lb, step)) for a positive step.
  Value emitTripCount(Location loc, Value lb, Value ub, Value step) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value rounded = arith::AddIOp::create(
        b, loc, span, arith::SubIOp::create(b, loc, step, one));
    Value count = arith::DivUIOp::create(b, loc, rounded, step);
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, ub, lb);
    return arith::SelectOp::create(b, loc, positive, count, zero);
  }

  /// Clones an scf.for and records, per iteration, every value its body
  /// defines into per-thread tapes (memref.alloca sized by the trip count,
  /// static when the bounds are constants) for the reverse sweep.
  LogicalResult forwardFor(scf::ForOp op) {
    Location loc = op.getLoc();
    // scf.if in the body is fine: the forward if yields everything its
    // branches define, and those results are taped like any body value.
    Operation *unsupportedRegion = nullptr;
    op.getBody()->walk([&](Operation *inner) {
      if (inner->getNumRegions() && !isa<scf::IfOp, scf::ForOp>(inner) &&
          !isGPUCollective(inner) && regionTouchesActive(inner)) {
        unsupportedRegion = inner;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unsupportedRegion)
      return unsupportedRegion->emitOpError(
          "is a region op on an active path inside a loop, which reverse mode "
          "does not support yet (scf.if and scf.for are supported)");
    Value lb = fwd.lookup(op.getLowerBound());
    Value ub = fwd.lookup(op.getUpperBound());
    Value step = fwd.lookup(op.getStep());
    LoopTape &tape = loopTapes[op];
    tape.lowerBound = lb;
    tape.step = step;
    std::optional<int64_t> staticCount;
    if (auto l = getConstantIntValue(op.getLowerBound()))
      if (auto u = getConstantIntValue(op.getUpperBound()))
        if (auto s = getConstantIntValue(op.getStep()); s && *s > 0)
          staticCount = std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
    // Tapes live at function entry so that the reverse sweep, which runs
    // after every region of the forward sweep has closed, can read them. A
    // dynamic trip count is only known where the loop is, so such loops must
    // be at function level.
    if (!staticCount && !branchScopes.empty())
      return op->emitOpError("has a dynamic trip count inside a region on an "
                             "active path; reverse mode needs its tape at "
                             "function level (use constant bounds or hoist "
                             "the loop)");
    // A nested loop's tape has a slot per iteration of every enclosing loop:
    // those must have static trip counts too.
    int64_t enclosing = 1;
    for (auto [linear, count] : forwardIterations) {
      if (count < 0)
        return op->emitOpError("is nested in a loop with a dynamic trip count "
                               "on an active path, which reverse mode does "
                               "not support (use constant bounds)");
      enclosing = count;
    }
    tape.staticCount = staticCount ? *staticCount : -1;
    int64_t slots = staticCount ? *staticCount * enclosing : -1;
    OpBuilder::InsertPoint loopPoint = b.saveInsertionPoint();
    OpBuilder::InsertionGuard tapeGuard(b);
    if (staticCount) {
      b.setInsertionPointToStart(entry);
      tape.tripCount = arith::ConstantIndexOp::create(b, loc, *staticCount);
    } else {
      tape.tripCount = emitTripCount(loc, lb, ub, step);
    }

    // Values to tape: the induction variable, the iter_args, body results,
    // and the values defined inside the body's scf.ifs (which the forward if
    // yields, so they exist at body level).
    SmallVector<Value> taped = {op.getInductionVar()};
    llvm::append_range(taped, op.getRegionIterArgs());
    auto tapeResults = [&](Operation *inner) {
      for (Value r : inner->getResults())
        if (!isa<BaseMemRefType>(r.getType()))
          taped.push_back(r);
    };
    for (Operation &inner : op.getBody()->without_terminator()) {
      // Cheap values are recomputed, not taped.
      if (isRecomputable(&inner)) {
        tape.recomputed.push_back(&inner);
        continue;
      }
      tapeResults(&inner);
      // Values inside nested loops are taped by those loops.
      if (isa<scf::IfOp>(inner))
        inner.walk<WalkOrder::PreOrder>([&](Operation *nested) {
          if (nested == &inner)
            return WalkResult::advance();
          tapeResults(nested);
          return isa<scf::ForOp>(nested) ? WalkResult::skip()
                                         : WalkResult::advance();
        });
    }
    for (Value v : taped) {
      // index has no storage size on every target: tape it as i64.
      Type element = v.getType().isIndex() ? b.getI64Type() : v.getType();
      auto type = staticCount
                      ? MemRefType::get({slots}, element)
                      : MemRefType::get({ShapedType::kDynamic}, element);
      Value memref = staticCount
                         ? memref::AllocaOp::create(b, loc, type).getResult()
                         : memref::AllocaOp::create(b, loc, type,
                                                    ValueRange{tape.tripCount})
                               .getResult();
      tape.tapes.push_back({v, memref});
    }
    b.restoreInsertionPoint(loopPoint);

    auto loop =
        scf::ForOp::create(b, loc, lb, ub, step, mapped(op.getInitArgs()));
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    clearTerminator(*body);
    b.setInsertionPointToEnd(body);
    fwd.map(op.getInductionVar(), loop.getInductionVar());
    for (auto [src, dst] :
         llvm::zip(op.getRegionIterArgs(), loop.getRegionIterArgs()))
      fwd.map(src, dst);
    // This iteration's tape slot, linearized over the enclosing loops.
    Value iteration = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, loop.getInductionVar(), lb),
        step);
    iteration = linearize(loc, forwardIterations, iteration, tape.staticCount);
    forwardIterations.push_back({iteration, tape.staticCount < 0 ? -1 : slots});
    // Body values are taped, not cached by enclosing regions.
    branchScopes.emplace_back();
    LogicalResult bodyResult = forwardBlock(*op.getBody());
    branchScopes.pop_back();
    forwardIterations.pop_back();
    if (failed(bodyResult))
      return failure();
    for (auto [src, memref] : tape.tapes) {
      Value value = fwd.lookup(src);
      if (value.getType().isIndex())
        value = arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
      memref::StoreOp::create(b, loc, value, memref, iteration);
    }
    auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
    scf::YieldOp::create(b, loc, mapped(yield.getOperands()));
    b.setInsertionPointAfter(loop);
    for (auto [src, dst] : llvm::zip(op.getResults(), loop.getResults()))
      defined(src, dst);
    return success();
  }

  //--- scf.while: a counted loop, iterations recomputed -------------------//

  /// Keys standing for the iteration count of each forward while: the count
  /// is not a value of the callee, but mapping it like one lets enclosing
  /// scf.ifs cache it for the reverse sweep.
  Block countKeys;
  DenseMap<Operation *, Value> whileCounts; // src while → count key

  /// Emits `block`'s ops with `mapping` (block arguments already mapped) and
  /// returns its terminator's mapped operands (a condition's forwarded
  /// values).
  SmallVector<Value> cloneBody(Block &block, IRMapping &mapping) {
    for (Operation &inner : block.without_terminator())
      b.clone(inner, mapping);
    Operation *terminator = block.getTerminator();
    ValueRange passed = isa<scf::ConditionOp>(terminator)
                            ? cast<scf::ConditionOp>(terminator).getArgs()
                            : terminator->getOperands();
    return llvm::map_to_vector(passed,
                               [&](Value v) { return mapping.lookup(v); });
  }

  /// The forward while again, counting its iterations. Reverse mode
  /// recomputes the state of iteration t from the initial values (a while
  /// has no trip count to size a tape by), so the loop may not write memory
  /// nor read memory the function writes, and holds no regions.
  LogicalResult forwardWhile(scf::WhileOp op) {
    Location loc = op.getLoc();
    // The reverse sweep recomputes iteration t with t steps per thread: a
    // collective or barrier in the loop would run a different number of
    // times in different lanes (the primal's count may differ per lane too,
    // but there every lane leaves the loop once).
    Operation *collective = nullptr;
    op->walk([&](Operation *inner) {
      if (isGPUCollective(inner) || isa<gpu::BarrierOp>(inner))
        collective = inner;
    });
    if (collective)
      return collective->emitOpError(
          "is inside an scf.while on an active path; reverse mode recomputes "
          "while iterations per thread, which cannot keep a GPU collective or "
          "barrier convergent (use an scf.for with a uniform trip count)");
    Operation *bad = nullptr;
    op->walk([&](Operation *inner) {
      if (inner == op.getOperation() ||
          isa<scf::YieldOp, scf::ConditionOp>(inner))
        return;
      bool readsWritten = false;
      if (auto load = dyn_cast<memref::LoadOp>(inner))
        readsWritten = writtenBuffers.contains(getViewSource(load.getMemRef()));
      if (inner->getNumRegions() || readsWritten ||
          (!isMemoryEffectFree(inner) && !isa<memref::LoadOp>(inner)))
        bad = inner;
    });
    if (bad)
      return bad->emitOpError(
          "is inside an scf.while on an active path; reverse mode recomputes "
          "while iterations, so the loop may hold only side-effect-free ops "
          "without regions and loads of buffers the function never writes");
    SmallVector<Value> inits = mapped(op.getInits());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    inits.push_back(zero);
    SmallVector<Type> types(op.getResultTypes());
    types.push_back(b.getIndexType());
    auto loop = scf::WhileOp::create(b, loc, types, inits);
    auto makeBlock = [&](Region &region, TypeRange argTypes) {
      SmallVector<Type> all(argTypes);
      all.push_back(b.getIndexType());
      SmallVector<Location> locs(all.size(), loc);
      return b.createBlock(&region, {}, all, locs);
    };
    {
      OpBuilder::InsertionGuard guard(b);
      Block *before =
          makeBlock(loop.getBefore(), op.getBefore().getArgumentTypes());
      IRMapping mapping = fwd;
      mapping.map(op.getBeforeArguments(), before->getArguments().drop_back());
      SmallVector<Value> passed = cloneBody(op.getBefore().front(), mapping);
      passed.push_back(before->getArguments().back());
      scf::ConditionOp::create(
          b, loc, mapping.lookup(op.getConditionOp().getCondition()), passed);
      Block *after =
          makeBlock(loop.getAfter(), op.getAfter().getArgumentTypes());
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

  /// The before-arguments after `count` iterations from the initial values.
  SmallVector<Value> recomputeWhileState(scf::WhileOp op, Value count) {
    Location loc = op.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop =
        scf::ForOp::create(b, loc, zero, count, one, mapped(op.getInits()));
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    clearTerminator(*body);
    b.setInsertionPointToEnd(body);
    IRMapping mapping = fwd;
    mapping.map(op.getBeforeArguments(), loop.getRegionIterArgs());
    SmallVector<Value> passed = cloneBody(op.getBefore().front(), mapping);
    mapping.map(op.getAfterArguments(), passed);
    scf::YieldOp::create(b, loc, cloneBody(op.getAfter().front(), mapping));
    return loop.getResults();
  }

  /// Reverses one execution of the before (and, with `afterAdjoints`, the
  /// after) region from the recomputed before-arguments `state`: `seed`
  /// holds the adjoints of the condition's values (before only) or of the
  /// after region's yields; returns the before-arguments' adjoints.
  /// Contributions to values defined outside go into `scope` too.
  LogicalResult reverseWhileRegions(scf::WhileOp op, ValueRange state,
                                    bool withAfter, ArrayRef<Value> seeds,
                                    AdjointScope &scope,
                                    SmallVector<Value> &beforeAdjoints) {
    Location loc = op.getLoc();
    Block &before = op.getBefore().front();
    Block &after = op.getAfter().front();
    fwd.map(op.getBeforeArguments(), state);
    SmallVector<Value> passed = cloneBody(before, fwd);
    auto condition = op.getConditionOp();
    SmallVector<Value> conditionAdjoints(seeds);
    if (withAfter) {
      conditionAdjoints.assign(op.getAfterArguments().size(), Value());
      fwd.map(op.getAfterArguments(), passed);
      cloneBody(after, fwd);
      auto yield = cast<scf::YieldOp>(after.getTerminator());
      for (auto [v, d] : llvm::zip(yield.getOperands(), seeds))
        if (act.isVaried(v))
          scope.add(b, loc, v, d);
      if (failed(reverseBlock(after, scope)))
        return failure();
      for (auto [k, arg] : llvm::enumerate(op.getAfterArguments())) {
        Value d = scope.get(arg);
        conditionAdjoints[k] = d ? d : createZero(b, loc, arg.getType());
        scope.adjoints.erase(arg);
      }
    }
    for (auto [v, d] : llvm::zip(condition.getArgs(), conditionAdjoints))
      if (act.isVaried(v))
        scope.add(b, loc, v, d);
    if (failed(reverseBlock(before, scope)))
      return failure();
    beforeAdjoints.clear();
    for (BlockArgument arg : op.getBeforeArguments()) {
      Value d = scope.get(arg);
      beforeAdjoints.push_back(d ? d : createZero(b, loc, arg.getType()));
    }
    return success();
  }

  /// The reverse of an scf.while run N times: the final before-execution,
  /// then iterations N-1 ... 0, each from its state recomputed from the
  /// initial values (O(N²) work, no tape). The before-arguments' adjoints and
  /// the contributions to values defined outside are iter_args.
  LogicalResult reverseWhile(scf::WhileOp op, AdjointScope &outer) {
    Location loc = op.getLoc();
    Value count = fwd.lookup(whileCounts[op]);
    SmallVector<Value> outside = usedFromOutside(op);
    // The final execution of the before region.
    SmallVector<Value> seeds;
    for (Value r : op.getResults()) {
      Value d = outer.get(r);
      seeds.push_back(d ? d : createZero(b, loc, r.getType()));
    }
    AdjointScope last;
    for (Value o : outside)
      last.adjoints[o] = createZero(b, loc, o.getType());
    SmallVector<Value> adjoints;
    if (failed(reverseWhileRegions(op, recomputeWhileState(op, count),
                                   /*withAfter=*/false, seeds, last, adjoints)))
      return failure();
    SmallVector<Value> inits(adjoints);
    for (Value o : outside)
      inits.push_back(last.get(o));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(b, loc, zero, count, one, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *body = loop.getBody();
      clearTerminator(*body);
      b.setInsertionPointToEnd(body);
      Value lastIteration = arith::SubIOp::create(b, loc, count, one);
      Value t =
          arith::SubIOp::create(b, loc, lastIteration, loop.getInductionVar());
      ValueRange carried = loop.getRegionIterArgs();
      unsigned numArgs = op.getBeforeArguments().size();
      AdjointScope scope;
      for (auto [k, o] : llvm::enumerate(outside))
        scope.adjoints[o] = carried[numArgs + k];
      SmallVector<Value> next;
      if (failed(reverseWhileRegions(
              op, recomputeWhileState(op, t), /*withAfter=*/true,
              SmallVector<Value>(carried.take_front(numArgs)), scope, next)))
        return failure();
      for (Value o : outside)
        next.push_back(scope.get(o));
      scf::YieldOp::create(b, loc, next);
    }
    for (auto [init, d] : llvm::zip(
             op.getInits(), loop.getResults().take_front(op.getInits().size())))
      if (act.isVaried(init))
        outer.add(b, loc, init, d);
    for (auto [k, o] : llvm::enumerate(outside))
      outer.add(b, loc, o, loop.getResult(op.getInits().size() + k));
    return success();
  }

  //--- Reverse sweep -------------------------------------------------------//

  LogicalResult reverseBlock(Block &src, AdjointScope &scope) {
    for (Operation &op : llvm::reverse(src.without_terminator()))
      if (failed(reverseOp(&op, scope)))
        return failure();
    return success();
  }

  //--- Ordered (deterministic) accumulation --------------------------------//

  /// An element many threads accumulate into: each thread sums its
  /// contributions in a private accumulator; the block's accumulators are
  /// reduced in a fixed order (gpu.all_reduce) at each replayed barrier
  /// (workgroup memory) or at the end (kernel parameters, then per-block
  /// partials in the scratch, added up in block order by the last block).
  struct OrderedSite {
    Value memref;               // src memref, a function argument
    SmallVector<Value> indices; // src indices, uniform
    Value shadow;               // function-level shadow
    Value acc;                  // memref<1xT> per-thread accumulator
    bool workgroup;
    int64_t word; // first scratch word (kernel parameters)
  };
  OrderedAccumulation *ordering = nullptr;
  Block *primalBody = nullptr;
  SmallVector<OrderedSite> orderedSites;
  SmallVector<Operation *> replayedBarriers;
  /// Shadow reads (reverse of stores and atomic adds) with their src memref:
  /// the reading thread's own pending contributions to the element join them.
  SmallVector<std::pair<memref::LoadOp, Value>> shadowReads;

  /// True if src `v` has one value across the grid (or, `perBlock`, across
  /// the block) and can be recomputed anywhere: constants, launch sizes, a
  /// kernel's scalar parameters, block ids (`perBlock`) and arith of those.
  bool isUniform(Value v, bool perBlock) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return ordering->scratch && arg.getOwner() == primalBody &&
             !isa<BaseMemRefType>(arg.getType());
    Operation *op = v.getDefiningOp();
    if (isa<gpu::BlockDimOp, gpu::GridDimOp>(op))
      return true;
    if (isa<gpu::BlockIdOp>(op))
      return perBlock;
    if (op->getNumRegions() || !isPure(op) ||
        !isa<arith::ArithDialect>(op->getDialect()))
      return false;
    return llvm::all_of(op->getOperands(),
                        [&](Value o) { return isUniform(o, perBlock); });
  }

  /// Clones the computation of the uniform src value `v` at the current
  /// point.
  Value rematerialize(Value v, IRMapping &map) {
    if (Value known = map.lookupOrNull(v))
      return known;
    if (isa<BlockArgument>(v))
      return fwd.lookup(v);
    Operation *op = v.getDefiningOp();
    for (Value operand : op->getOperands())
      map.map(operand, rematerialize(operand, map));
    return b.clone(*op, map)->getResult(cast<OpResult>(v).getResultNumber());
  }

  SmallVector<Value> rematerialize(ArrayRef<Value> values) {
    IRMapping map;
    return llvm::map_to_vector(values,
                               [&](Value v) { return rematerialize(v, map); });
  }

  static int64_t wordsOf(Type type) {
    return llvm::divideCeil(type.getIntOrFloatBitWidth(), 32);
  }

  LogicalResult accumulateOrdered(Operation *src, Value value) {
    auto load = cast<memref::LoadOp>(src);
    auto arg = dyn_cast<BlockArgument>(load.getMemRef());
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        load.getMemRefType().getMemorySpace());
    bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
    if (!arg || arg.getOwner() != primalBody ||
        !llvm::all_of(load.getIndices(),
                      [&](Value i) { return isUniform(i, workgroup); }))
      return src->emitOpError(
          "has an adjoint that deterministic=true cannot order: its index "
          "varies across threads without being proven thread-exclusive "
          "(ordered accumulation covers an element every thread of the grid "
          "reads, or of the block for workgroup memory, through a parameter "
          "of the function)");
    if (!isa<FloatType>(value.getType()))
      return src->emitOpError("has a non-scalar adjoint that "
                              "deterministic=true cannot order");
    if (!workgroup && !ordering->scratch)
      return src->emitOpError(
          "has an adjoint that many threads of the grid accumulate into one "
          "element; deterministic=true orders that only in a kernel adjoint "
          "(nabla.kernel_adjoint), whose scratch parameter holds the "
          "per-block partials");
    if (workgroup && !ordering->scratch &&
        !primalBody
             ->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
             .wasInterrupted())
      return src->emitOpError(
          "has an adjoint that the block accumulates into one workgroup "
          "element; deterministic=true orders it with block reductions, which "
          "need a function that the whole block calls together (one holding "
          "a barrier) or a kernel adjoint");
    OrderedSite *site = nullptr;
    for (OrderedSite &s : orderedSites)
      if (s.memref == arg && llvm::equal(s.indices, load.getIndices()))
        site = &s;
    Location loc = src->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    if (!site) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(entry);
      Type type = value.getType();
      Value acc = memref::AllocaOp::create(b, loc, MemRefType::get({1}, type));
      memref::StoreOp::create(
          b, loc, createZero(b, loc, type), acc,
          arith::ConstantIndexOp::create(b, loc, 0).getResult());
      orderedSites.push_back({arg, llvm::to_vector(load.getIndices()),
                              shadow.lookup(arg), acc, workgroup,
                              workgroup ? 0 : ordering->wordsPerBlock});
      if (!workgroup)
        ordering->wordsPerBlock += wordsOf(type);
      site = &orderedSites.back();
    }
    Value old = memref::LoadOp::create(b, loc, site->acc, zero);
    memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, value),
                            site->acc, zero);
    return success();
  }

  Value blockSum(Location loc, Value v) {
    return gpu::AllReduceOp::create(
               b, loc, v.getType(), v,
               gpu::AllReduceOperationAttr::get(b.getContext(),
                                                gpu::AllReduceOperation::ADD),
               b.getUnitAttr())
        .getResult();
  }

  /// Adds `v` to `site`'s shadow element on thread 0 of the block.
  void addOnFirstThread(Location loc, const OrderedSite &site, Value tid,
                        Value v) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    SmallVector<Value> indices = rematerialize(site.indices);
    Value old = memref::LoadOp::create(b, loc, site.shadow, indices);
    memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, v), site.shadow,
                            indices);
  }

  /// The block's accumulators of workgroup elements, reduced in order and
  /// added by thread 0 (before a barrier publishes them).
  void flushWorkgroupSites(Location loc) {
    Value tid;
    for (const OrderedSite &site : orderedSites) {
      if (!site.workgroup)
        continue;
      if (!tid)
        tid = emitLinearIdAndCount(b, loc).first;
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value mine = memref::LoadOp::create(b, loc, site.acc, zero);
      memref::StoreOp::create(b, loc, createZero(b, loc, mine.getType()),
                              site.acc, zero);
      addOnFirstThread(loc, site, tid, blockSum(loc, mine));
    }
  }

  SmallVector<Value> toWords(Location loc, Value v) {
    unsigned width = v.getType().getIntOrFloatBitWidth();
    Value bits = arith::BitcastOp::create(b, loc, b.getIntegerType(width), v);
    if (width < 32)
      return {arith::ExtUIOp::create(b, loc, b.getI32Type(), bits)};
    SmallVector<Value> words;
    for (unsigned low = 0; low < width; low += 32) {
      Value shifted =
          low ? arith::ShRUIOp::create(
                    b, loc, bits,
                    arith::ConstantIntOp::create(b, loc, bits.getType(), low))
              : bits;
      words.push_back(width == 32 ? shifted
                                  : arith::TruncIOp::create(
                                        b, loc, b.getI32Type(), shifted));
    }
    return words;
  }

  Value fromWords(Location loc, ArrayRef<Value> words, Type type) {
    unsigned width = type.getIntOrFloatBitWidth();
    Type intType = b.getIntegerType(width);
    Value bits;
    for (auto [k, word] : llvm::enumerate(words)) {
      Value part = word;
      if (width < 32)
        part = arith::TruncIOp::create(b, loc, intType, word);
      else if (width > 32)
        part = arith::ShLIOp::create(
            b, loc, arith::ExtUIOp::create(b, loc, intType, word),
            arith::ConstantIntOp::create(b, loc, intType, 32 * k));
      bits = bits ? arith::OrIOp::create(b, loc, bits, part) : part;
    }
    return arith::BitcastOp::create(b, loc, type, bits);
  }

  /// Kernel parameters' elements: block sums stored as the block's partials,
  /// then the last block to arrive (counter in scratch word 0, incremented
  /// with acquire-release semantics after the stores) adds the partials up in
  /// block order and resets the counter.
  void flushGridSites(Location loc) {
    if (llvm::none_of(orderedSites,
                      [](const OrderedSite &s) { return !s.workgroup; }))
      return;
    Value scratch = ordering->scratch;
    // (Plain values: lambdas below capture them.)
    Value tid, threads, blk, blocks;
    std::tie(tid, threads) = emitLinearIdAndCount(b, loc);
    std::tie(blk, blocks) = emitLinearIdAndCount(b, loc, /*ofBlocks=*/true);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    // Word `word` of `site`'s partial of `block`: after the counter, one
    // row of `blocks` words per partial word.
    auto slot = [&](const OrderedSite &site, int64_t word, Value block) {
      Value row = arith::ConstantIndexOp::create(b, loc, site.word + word);
      Value base = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, row, blocks), one);
      return arith::AddIOp::create(b, loc, base, block).getResult();
    };
    SmallVector<Value> sums;
    for (const OrderedSite &site : orderedSites)
      if (!site.workgroup)
        sums.push_back(
            blockSum(loc, memref::LoadOp::create(b, loc, site.acc, zero)));
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero);
    Type i32 = b.getI32Type();
    auto publish = scf::IfOp::create(b, loc, TypeRange{i32}, isFirst,
                                     /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(publish.thenBlock());
      unsigned k = 0;
      for (const OrderedSite &site : orderedSites) {
        if (site.workgroup)
          continue;
        for (auto [w, word] : llvm::enumerate(toWords(loc, sums[k++])))
          memref::StoreOp::create(b, loc, word, scratch, slot(site, w, blk));
      }
      Value arrived = memref::AtomicRMWOp::create(
          b, loc, arith::AtomicRMWKind::addi,
          arith::ConstantIntOp::create(b, loc, i32, 1), scratch, zero);
      Value lastIndex = arith::IndexCastOp::create(
          b, loc, i32, arith::SubIOp::create(b, loc, blocks, one));
      Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         arrived, lastIndex);
      scf::YieldOp::create(
          b, loc, arith::ExtUIOp::create(b, loc, i32, last).getResult());
      b.setInsertionPointToStart(publish.elseBlock());
      scf::YieldOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, i32, 0).getResult());
    }
    Value isLast = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, blockSum(loc, publish.getResult(0)),
        arith::ConstantIntOp::create(b, loc, i32, 0));
    auto finish = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(finish.thenBlock());
    for (const OrderedSite &site : orderedSites) {
      if (site.workgroup)
        continue;
      Type type = cast<MemRefType>(site.acc.getType()).getElementType();
      // Thread t adds blocks t, t + threads, ... in order (reading with
      // atomics, coherent with the other blocks' publication); the block sum
      // combines the threads in a fixed order. Every thread runs the same
      // number of rounds (lavapipe mishandles atomics in loops whose trip
      // count differs between the lanes).
      Value rounds = arith::DivUIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, blocks,
                                arith::SubIOp::create(b, loc, threads, one)),
          threads);
      auto loop = scf::ForOp::create(b, loc, zero, rounds, one,
                                     ValueRange{createZero(b, loc, type)});
      {
        OpBuilder::InsertionGuard inner(b);
        clearTerminator(*loop.getBody());
        b.setInsertionPointToEnd(loop.getBody());
        Value block = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, loop.getInductionVar(), threads),
            tid);
        auto read = scf::IfOp::create(
            b, loc, TypeRange{type},
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, block,
                                  blocks),
            /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard branch(b);
          b.setInsertionPointToStart(read.thenBlock());
          SmallVector<Value> words;
          for (int64_t w = 0; w < wordsOf(type); ++w)
            words.push_back(memref::AtomicRMWOp::create(
                b, loc, arith::AtomicRMWKind::ori,
                arith::ConstantIntOp::create(b, loc, i32, 0), scratch,
                slot(site, w, block)));
          scf::YieldOp::create(b, loc, fromWords(loc, words, type));
          b.setInsertionPointToStart(read.elseBlock());
          scf::YieldOp::create(b, loc, createZero(b, loc, type));
        }
        scf::YieldOp::create(b, loc,
                             addDerivatives(b, loc, loop.getRegionIterArgs()[0],
                                            read.getResult(0)));
      }
      addOnFirstThread(loc, site, tid, blockSum(loc, loop.getResult(0)));
    }
    auto reset = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
    b.setInsertionPointToStart(reset.thenBlock());
    memref::StoreOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, i32, 0), scratch, zero);
  }

  /// Completes ordered accumulation at the end of the reverse sweep: shadow
  /// reads take the reading thread's pending contributions to their element,
  /// each replayed barrier and the end flush the workgroup accumulators, and
  /// the end the grid ones.
  void finishOrdered(Location loc) {
    if (orderedSites.empty())
      return;
    OpBuilder::InsertionGuard guard(b);
    for (auto [read, memref] : shadowReads) {
      for (const OrderedSite &site : orderedSites) {
        if (site.memref != memref)
          continue;
        b.setInsertionPointAfter(read);
        Location readLoc = read.getLoc();
        Value same;
        for (auto [mine, theirs] :
             llvm::zip(read.getIndices(), rematerialize(site.indices))) {
          Value eq = arith::CmpIOp::create(b, readLoc, arith::CmpIPredicate::eq,
                                           mine, theirs);
          same = same ? arith::AndIOp::create(b, readLoc, same, eq) : eq;
        }
        Type type = read.getType();
        auto take = scf::IfOp::create(b, readLoc, TypeRange{type}, same,
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(take.thenBlock());
          Value zero = arith::ConstantIndexOp::create(b, readLoc, 0);
          Value pending = memref::LoadOp::create(b, readLoc, site.acc, zero);
          memref::StoreOp::create(b, readLoc, createZero(b, readLoc, type),
                                  site.acc, zero);
          scf::YieldOp::create(b, readLoc, pending);
          b.setInsertionPointToStart(take.elseBlock());
          scf::YieldOp::create(b, readLoc, createZero(b, readLoc, type));
        }
        Value total =
            addDerivatives(b, readLoc, read.getResult(), take.getResult(0));
        read.getResult().replaceAllUsesExcept(total, total.getDefiningOp());
      }
    }
    for (Operation *barrier : replayedBarriers) {
      b.setInsertionPoint(barrier);
      flushWorkgroupSites(barrier->getLoc());
    }
  }

  /// Accumulates `value` into `shadowMemref[indices]`: a plain
  /// load-add-store when the access is thread-exclusive (a private shadow,
  /// the thread id into a workgroup buffer, or the global id into an
  /// argument), an atomic add otherwise. Thread and global ids along x are
  /// unique only in 1-D blocks (and grids): that is checked when the kernel
  /// runs, with the atomic as the fallback.
  LogicalResult accumulate(Operation *src, Value shadowMemref,
                           ValueRange indices, Value value) {
    Location loc = src->getLoc();
    Operation *index =
        indices.size() == 1 ? indices.front().getDefiningOp() : nullptr;
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        cast<MemRefType>(shadowMemref.getType()).getMemorySpace());
    bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
    auto globalX = dyn_cast_or_null<gpu::GlobalIdOp>(index);
    auto threadX = dyn_cast_or_null<gpu::ThreadIdOp>(index);
    // Views (subviews, casts) map indices injectively onto their buffer.
    bool argument = isa<BlockArgument>(getViewSource(shadowMemref));
    auto plain = [&] {
      Value old = memref::LoadOp::create(b, loc, shadowMemref, indices);
      memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, value),
                              shadowMemref, indices);
      return success();
    };
    auto atomic = [&] {
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value,
                                  shadowMemref, indices);
      return success();
    };
    // Private shadows (of allocations) belong to the thread.
    if (getAllocation(shadowMemref))
      return plain();
    bool byThread = (globalX && globalX.getDimension() == gpu::Dimension::x &&
                     argument && !workgroup) ||
                    (threadX && threadX.getDimension() == gpu::Dimension::x &&
                     workgroup && argument);
    if (byThread && readElsewhere(src)) {
      if (remarks)
        src->emitRemark("adjoint accumulation keeps an atomic: other reads of "
                        "the buffer at other indices can meet this thread's "
                        "element");
      byThread = false;
    } else if (!byThread && remarks && !ordering->enabled) {
      src->emitRemark("adjoint accumulation keeps an atomic: the index is "
                      "not proven to be an injective function of the "
                      "global thread id");
    }
    if (!byThread) {
      if (ordering->enabled)
        return accumulateOrdered(src, value);
      return atomic();
    }
    // A plain store at the same place in the primal already requires the
    // launch to keep it thread-exclusive (else the primal races).
    if (primalStoresAtSamePlace(src))
      return plain();
    auto oneDimensional = scf::IfOp::create(
        b, loc, isOneDimensionalLaunch(loc, /*withGrid=*/!workgroup),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(oneDimensional.thenBlock());
    (void)plain();
    b.setInsertionPointToStart(oneDimensional.elseBlock());
    return atomic();
  }

  /// True if the function also reads the buffer `src` loads from at other
  /// indices: threads can then meet at one element through different reads
  /// (x[i] of thread i, x[i - 1] of thread i + 1), so the thread-indexed read's
  /// accumulation is not exclusive. Broadcast reads the ordered accumulation
  /// takes publish only after a barrier and do not count.
  bool readElsewhere(Operation *src) {
    auto read = cast<memref::LoadOp>(src);
    if (!loadsCollected) {
      loadsCollected = true;
      src->getParentOfType<func::FuncOp>().walk([&](memref::LoadOp load) {
        loadsByBuffer[getViewSource(load.getMemRef())].push_back(load);
      });
    }
    return llvm::any_of(
        loadsByBuffer[getViewSource(read.getMemRef())],
        [&](memref::LoadOp other) {
          if (other == read ||
              (other.getMemRef() == read.getMemRef() &&
               llvm::equal(other.getIndices(), read.getIndices())))
            return false;
          auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
              other.getMemRefType().getMemorySpace());
          bool workgroup =
              space && space.getValue() == gpu::AddressSpace::Workgroup;
          auto arg = dyn_cast<BlockArgument>(other.getMemRef());
          return !(ordering->enabled && arg && arg.getOwner() == primalBody &&
                   llvm::all_of(other.getIndices(), [&](Value i) {
                     return isUniform(i, workgroup);
                   }));
        });
  }
  bool loadsCollected = false;
  DenseMap<Value, SmallVector<memref::LoadOp>> loadsByBuffer;

  /// True if the function stores, non-atomically, to the element `load`
  /// reads (same buffer through views, same index values).
  static bool primalStoresAtSamePlace(Operation *load) {
    auto read = dyn_cast<memref::LoadOp>(load);
    if (!read)
      return false;
    Value buffer = getViewSource(read.getMemRef());
    auto function = load->getParentOfType<func::FuncOp>();
    WalkResult found = function.walk([&](memref::StoreOp store) {
      if (getViewSource(store.getMemRef()) == buffer &&
          store.getMemRef() == read.getMemRef() &&
          store.getIndices() == read.getIndices())
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return found.wasInterrupted();
  }

  /// True when the block (and, `withGrid`, the grid) is 1-D along x.
  Value isOneDimensionalLaunch(Location loc, bool withGrid) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value result;
    auto require = [&](Value size) {
      Value unit =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one);
      result = result ? arith::AndIOp::create(b, loc, result, unit) : unit;
    };
    for (gpu::Dimension d : {gpu::Dimension::y, gpu::Dimension::z}) {
      require(gpu::BlockDimOp::create(b, loc, d));
      if (withGrid)
        require(gpu::GridDimOp::create(b, loc, d));
    }
    return result;
  }

  SmallVector<Value> mapped(ValueRange values) {
    return llvm::map_to_vector(values, [&](Value v) { return fwd.lookup(v); });
  }

  LogicalResult reverseOp(Operation *op, AdjointScope &scope) {
    Location loc = op->getLoc();
    if (auto ifOp = dyn_cast<scf::IfOp>(op))
      return reverseIf(ifOp, scope);
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && loopTapes.count(op))
      return reverseFor(loop, scope);
    if (auto loop = dyn_cast<scf::WhileOp>(op); loop && whileCounts.count(op))
      return reverseWhile(loop, scope);
    if (auto call = dyn_cast<func::CallOp>(op);
        call && touchesActiveData(op, act))
      return reverseCall(call, scope);
    // The reverse sweep replays each barrier at the mirrored point: adjoints
    // written to workgroup shadows before it are read by other threads after.
    if (isa<gpu::BarrierOp>(op)) {
      replayedBarriers.push_back(gpu::BarrierOp::create(b, loc));
      return success();
    }
    if (isGPUCollective(op)) {
      Value d = scope.get(op->getResult(0));
      if (!d || !act.isVaried(op->getOperand(0)))
        return success();
      FailureOr<Value> contribution = emitCollectiveAdjoint(
          b, op, mapped(op->getOperands()), fwd.lookup(op->getResult(0)), d);
      if (failed(contribution))
        return failure();
      scope.add(b, loc, op->getOperand(0), *contribution);
      return success();
    }
    if (op->getNumRegions() && !regionTouchesActive(op))
      return success();
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value sh = shadowOf(store.getMemRef());
      if (!sh)
        return checkUnshadowedWrite(op, store.getValue(), act);
      if (!isFloatLike(store.getValue().getType()))
        return success();
      SmallVector<Value> indices = mapped(store.getIndices());
      auto d = memref::LoadOp::create(b, loc, sh, indices);
      shadowReads.push_back({d, store.getMemRef()});
      memref::StoreOp::create(
          b, loc, createZero(b, loc, store.getValue().getType()), sh, indices);
      if (act.isVaried(store.getValue()))
        scope.add(b, loc, store.getValue(), d);
      return success();
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      Value sh = shadowOf(load.getMemRef());
      if (Value d = scope.get(load.getResult()); d && sh)
        return accumulate(op, sh, mapped(load.getIndices()), d);
      return success();
    }
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
      Value sh = shadowOf(atomic.getMemref());
      if (!sh)
        return checkUnshadowedWrite(op, atomic.getValue(), act);
      if (scope.get(atomic.getResult()))
        return unsupported(op, "reverse");
      if (isFloatMinMaxAtomic(atomic.getKind()))
        return reverseAtomicMinMax(atomic, sh, scope);
      if (atomic.getKind() != arith::AtomicRMWKind::addf)
        return unsupported(op, "reverse");
      if (act.isVaried(atomic.getValue())) {
        auto d =
            memref::LoadOp::create(b, loc, sh, mapped(atomic.getIndices()));
        shadowReads.push_back({d, atomic.getMemref()});
        scope.add(b, loc, atomic.getValue(), d);
      }
      return success();
    }
    bool variedResult = llvm::any_of(op->getResults(),
                                     [&](Value r) { return act.isVaried(r); });
    if (!variedResult) {
      if (!isa<ViewLikeOpInterface>(op) && !readsOnlyMetadata(op) &&
          llvm::any_of(op->getOperands(),
                       [&](Value v) { return act.isShadowed(v); }))
        return unsupported(op, "reverse");
      return success();
    }
    if (!hasDerivativeRule(op))
      return unsupported(op, "reverse");
    Value d = scope.get(op->getResult(0));
    if (!d || hasZeroDerivative(op))
      return success();
    if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      if (act.isVaried(op->getOperand(0)))
        scope.add(b, loc, op->getOperand(0),
                  castDerivative(b, op, d, /*toOperand=*/true));
      return success();
    }
    // Partials are computed on a clone at the current point; its result is
    // replaced by the forward value when the sweep has one. (Cloning records
    // the clone in `fwd`, so the forward mapping is restored afterwards.)
    Value forward = fwd.lookupOrNull(op->getResult(0));
    Operation *clone = b.clone(*op, fwd);
    FailureOr<SmallVector<Value>> partials = emitPartials(b, clone);
    if (forward) {
      fwd.map(op->getResult(0), forward);
      Value cloned = clone->getResult(0);
      cloned.replaceAllUsesWith(forward);
      if (succeeded(partials))
        for (Value &partial : *partials)
          if (partial == cloned)
            partial = forward;
      clone->erase();
    }
    if (failed(partials))
      return unsupported(op, "reverse");
    for (auto [operand, partial] : llvm::zip(op->getOperands(), *partials))
      if (partial && act.isVaried(operand))
        scope.add(b, loc, operand, arith::MulFOp::create(b, loc, d, partial));
    return success();
  }

  //--- Primal float min/max atomics ---------------------------------------//

  /// r = atomic max(v, M[i]): the location's final value F came from the
  /// one thread (and iteration) whose atomic stored it, the one that saw a
  /// smaller old value and had v = F; that atomic takes the location's
  /// cotangent and zeroes it. Ties between equal values thus go to the
  /// first atomic in the order the hardware performed them; when no atomic
  /// raised the initial value, the cotangent stays with it.
  LogicalResult reverseAtomicMinMax(memref::AtomicRMWOp atomic,
                                    Value shadowMemref, AdjointScope &scope) {
    if (failed(checkMinMaxAtomic(atomic, "reverse", /*sameBlock=*/false)))
      return failure();
    if (!act.isVaried(atomic.getValue()))
      return success();
    Location loc = atomic.getLoc();
    SmallVector<Value> indices = mapped(atomic.getIndices());
    Value value = fwd.lookup(atomic.getValue());
    Value wins =
        emitStoredFinalValue(b, atomic, fwd.lookup(atomic.getMemref()), indices,
                             value, fwd.lookup(atomic.getResult()));
    Type type = value.getType();
    auto taken = scf::IfOp::create(b, loc, type, wins, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(taken.thenBlock());
      Value d = memref::LoadOp::create(b, loc, shadowMemref, indices);
      memref::StoreOp::create(b, loc, createZero(b, loc, type), shadowMemref,
                              indices);
      scf::YieldOp::create(b, loc, d);
      b.setInsertionPointToStart(taken.elseBlock());
      scf::YieldOp::create(b, loc, createZero(b, loc, type));
    }
    scope.add(b, loc, atomic.getValue(), taken.getResult(0));
    return success();
  }

  /// The reverse of an scf.for: iterations in reverse order, each reloading
  /// its values from the tapes; the adjoints of the iter_args are carried as
  /// iter_args, and so are the contributions to values defined outside.
  LogicalResult reverseFor(scf::ForOp op, AdjointScope &outer) {
    Location loc = op.getLoc();
    LoopTape &tape = loopTapes[op];
    SmallVector<unsigned> carried;
    for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
      if (act.isVaried(arg))
        carried.push_back(i);
    SmallVector<Value> outside = usedFromOutside(op);
    SmallVector<Value> inits;
    for (unsigned i : carried) {
      Value d = outer.get(op.getResult(i));
      inits.push_back(d ? d : createZero(b, loc, op.getResult(i).getType()));
    }
    for (Value o : outside)
      inits.push_back(createZero(b, loc, o.getType()));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(b, loc, zero, tape.tripCount, one, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *body = loop.getBody();
      clearTerminator(*body);
      b.setInsertionPointToEnd(body);
      Value last = arith::SubIOp::create(b, loc, tape.tripCount, one);
      Value iteration =
          arith::SubIOp::create(b, loc, last, loop.getInductionVar());
      iteration =
          linearize(loc, reverseIterations, iteration, tape.staticCount);
      reverseIterations.push_back({iteration, 0});
      // Reload this iteration's values; remember the mappings to restore.
      SmallVector<std::pair<Value, Value>> saved;
      for (auto [src, memref] : tape.tapes) {
        saved.push_back({src, fwd.lookupOrNull(src)});
        Value value = memref::LoadOp::create(b, loc, memref, iteration);
        if (src.getType().isIndex())
          value = arith::IndexCastOp::create(b, loc, src.getType(), value);
        fwd.map(src, value);
      }
      for (Operation *recomputed : tape.recomputed) {
        for (Value r : recomputed->getResults())
          saved.push_back({r, fwd.lookupOrNull(r)});
        b.clone(*recomputed, fwd);
      }
      AdjointScope scope;
      ValueRange carriedIn = loop.getRegionIterArgs();
      for (auto [k, o] : llvm::enumerate(outside))
        scope.adjoints[o] = carriedIn[carried.size() + k];
      auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
      for (auto [k, i] : llvm::enumerate(carried))
        scope.add(b, loc, yield.getOperand(i), carriedIn[k]);
      LogicalResult bodyResult = reverseBlock(*op.getBody(), scope);
      reverseIterations.pop_back();
      if (failed(bodyResult))
        return failure();
      SmallVector<Value> yields;
      for (unsigned i : carried) {
        Value arg = op.getRegionIterArgs()[i];
        Value d = scope.get(arg);
        yields.push_back(d ? d : createZero(b, loc, arg.getType()));
      }
      for (Value o : outside)
        yields.push_back(scope.get(o));
      scf::YieldOp::create(b, loc, yields);
      for (auto [src, old] : saved) {
        if (old)
          fwd.map(src, old);
        else
          fwd.erase(src);
      }
    }
    for (auto [k, i] : llvm::enumerate(carried))
      if (act.isVaried(op.getInitArgs()[i]))
        outer.add(b, loc, op.getInitArgs()[i], loop.getResult(k));
    for (auto [k, o] : llvm::enumerate(outside))
      outer.add(b, loc, o, loop.getResult(carried.size() + k));
    return success();
  }

  /// A call with a custom reverse rule: the forward sweep ran the primal
  /// call; here the rule gets the primal arguments, the shadows and the
  /// results' adjoints as seeds, and returns the active arguments' gradients.
  LogicalResult reverseCall(func::CallOp call, AdjointScope &scope) {
    Location loc = call.getLoc();
    auto [args, rets] = callActivities(call, DerivativeMode::Reverse, act);
    func::FuncOp rule =
        findRule(call.getCallee(), DerivativeMode::Reverse, args, rets);
    if (!rule)
      return missingRule(call, DerivativeMode::Reverse, args, rets);
    SmallVector<Value> operands;
    for (auto [v, activity] : llvm::zip(call.getOperands(), args)) {
      operands.push_back(fwd.lookup(v));
      if (hasShadow(activity))
        operands.push_back(shadowOf(v));
    }
    for (auto [r, activity] : llvm::zip(call.getResults(), rets))
      if (isActiveValue(activity)) {
        Value d = scope.get(r);
        operands.push_back(d ? d : createZero(b, loc, r.getType()));
      }
    auto ruleCall = func::CallOp::create(b, loc, rule, operands);
    unsigned next = llvm::count_if(rets, [](Activity a) {
      return a == Activity::Const || a == Activity::Active;
    });
    for (auto [v, activity] : llvm::zip(call.getOperands(), args))
      if (activity == Activity::Active)
        scope.add(b, loc, v, ruleCall.getResult(next++));
    return success();
  }

  /// Varied src values defined outside `op` and used inside it.
  SmallVector<Value> usedFromOutside(Operation *op) {
    SmallVector<Value> values;
    DenseSet<Value> seen;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (act.isVaried(v) &&
            !op->isAncestor(v.getParentRegion()->getParentOp()) &&
            seen.insert(v).second)
          values.push_back(v);
    });
    return values;
  }

  LogicalResult reverseIf(scf::IfOp op, AdjointScope &outer) {
    Location loc = op.getLoc();
    SmallVector<Value> outside = usedFromOutside(op);
    SmallVector<Type> types =
        llvm::map_to_vector(outside, [](Value v) { return v.getType(); });
    auto revIf = scf::IfOp::create(b, loc, types, fwd.lookup(op.getCondition()),
                                   /*withElseRegion=*/true);
    Region *regions[2] = {&op.getThenRegion(), &op.getElseRegion()};
    Block *dsts[2] = {&revIf.getThenRegion().front(),
                      &revIf.getElseRegion().front()};
    for (int k = 0; k < 2; ++k) {
      OpBuilder::InsertionGuard guard(b);
      clearTerminator(*dsts[k]);
      b.setInsertionPointToEnd(dsts[k]);
      AdjointScope scope;
      if (!regions[k]->empty()) {
        Block &src = regions[k]->front();
        auto yield = cast<scf::YieldOp>(src.getTerminator());
        for (auto [i, v] : llvm::enumerate(yield.getOperands()))
          if (act.isVaried(v))
            scope.add(b, loc, v, outer.get(op.getResult(i)));
        if (failed(reverseBlock(src, scope)))
          return failure();
      }
      SmallVector<Value> yields;
      for (Value v : outside) {
        Value d = scope.get(v);
        yields.push_back(d ? d : createZero(b, loc, v.getType()));
      }
      scf::YieldOp::create(b, loc, yields);
    }
    for (auto [v, r] : llvm::zip(outside, revIf.getResults()))
      outer.add(b, loc, v, r);
    return success();
  }

private:
  OpBuilder &b;
  const Activities &act;
  bool remarks;
  RuleFinder findRule;
  RecordShadows &records;
};

} // namespace

LogicalResult nabla::emitReverseDerivative(
    OpBuilder &builder, Block &body, func::ReturnOp ret, const Activities &act,
    ArrayRef<Activity> args, ArrayRef<Activity> rets,
    ArrayRef<Value> primalArgs, ArrayRef<Value> shadowArgs, ValueRange seeds,
    bool remarks, OrderedAccumulation &ordering, RuleFinder findRule,
    RecordShadows &records) {
  VJPEmitter emitter(builder, act, remarks, std::move(findRule), records);
  emitter.entry = builder.getInsertionBlock();
  emitter.ordering = &ordering;
  emitter.primalBody = &body;
  emitter.collectWrittenBuffers(body);
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    emitter.fwd.map(arg, primalArgs[i]);
    if (shadowArgs[i])
      emitter.shadow[arg] = shadowArgs[i];
  }
  if (failed(emitter.forwardBlock(body)))
    return failure();

  AdjointScope scope;
  Location loc = ret.getLoc();
  unsigned seed = 0;
  for (auto [j, v] : llvm::enumerate(ret.getOperands()))
    if (isActiveValue(rets[j])) {
      Value s = seeds[seed++];
      if (act.isVaried(v))
        scope.add(builder, loc, v, s);
    }
  if (failed(emitter.reverseBlock(body, scope)))
    return failure();
  emitter.finishOrdered(loc);
  emitter.flushWorkgroupSites(loc);
  emitter.flushGridSites(loc);

  SmallVector<Value> results;
  for (auto [j, v] : llvm::enumerate(ret.getOperands()))
    if (rets[j] == Activity::Const || rets[j] == Activity::Active)
      results.push_back(emitter.fwd.lookup(v));
  for (auto [i, activity] : llvm::enumerate(args))
    if (activity == Activity::Active) {
      Value arg = body.getArgument(i);
      Value d = scope.get(arg);
      results.push_back(d ? d : createZero(builder, loc, arg.getType()));
    }
  func::ReturnOp::create(builder, loc, results);
  return success();
}
