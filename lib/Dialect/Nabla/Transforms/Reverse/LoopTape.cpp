//===- LoopTape.cpp - Reversing loops with per-thread tapes ---------------===//
//
// The tape strategy: the forward loop stores every value an iteration
// defines (iter_args, body results, values its scf.ifs yield) into
// per-thread slots allocated at function entry; the reverse loop runs the
// iterations backwards, reloading them. Cheap values (pure ops, loads of
// buffers the function never writes; inside the body's scf.ifs, pure and
// speculatable ops) are recomputed instead, and the induction variable is
// computed from the slot (lb + slot * step): a tree reduction's level loop
// then keeps nothing but the float values its adjoint needs. A
// nested loop's slots are linearized over the enclosing taped loops. The
// number of slots is a static bound: the trip count, or the hint
// `nabla.max_trip_count`; with the hint, the forward loop stores only the
// slots that exist and the reverse sweep checks the trip count against it:
// exceeded, the adjoints flowing through the loop become NaN (the kernel
// reports the broken promise in its results instead of silently wrong
// gradients). The same check guards a global tape sized by the largest
// trip count over the enclosing loops' corners (a triangular nest).
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "GPUDerivatives.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nabla;

/// The bit width a private slot keeps of `type`, or 0 if it cannot.
static unsigned slotBits(Type type) {
  if (type.isIndex())
    return 64;
  if (type.isIntOrFloat())
    return type.getIntOrFloatBitWidth();
  return 0;
}

int64_t nabla::privateSlotBytes(Type type) {
  return llvm::divideCeil(slotBits(type), 8);
}

int64_t nabla::tapeSlotBytes(Type type, bool global) {
  int64_t bytes = privateSlotBytes(type);
  return global && bytes ? std::max<int64_t>(bytes, 4) : bytes;
}

Value nabla::createGlobalSlots(OpBuilder &b, Location loc, Type type,
                               Value count) {
  unsigned bits = slotBits(type);
  if (!bits || bits > 64)
    return {};
  Type i32 = b.getI32Type();
  auto slots = bits == 64 ? MemRefType::get({ShapedType::kDynamic, 2}, i32)
                          : MemRefType::get({ShapedType::kDynamic}, i32);
  return TapeOp::create(b, loc, slots, count);
}

SmallVector<Value> nabla::elementIndices(OpBuilder &b, Location loc,
                                         MemRefType type, Value linear) {
  SmallVector<Value> indices(type.getRank());
  for (int64_t d = type.getRank() - 1; d > 0; --d) {
    Value size = arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
    indices[d] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
  indices[0] = linear;
  return indices;
}

Value nabla::createPrivateSlots(OpBuilder &b, Location loc, Type type,
                                int64_t count) {
  unsigned bits = slotBits(type);
  if (!bits || bits > 64)
    return {};
  count = std::max<int64_t>(count, 1);
  if (bits == 64)
    return memref::AllocaOp::create(
        b, loc, MemRefType::get({count, 2}, b.getI32Type()));
  return memref::AllocaOp::create(
      b, loc, MemRefType::get({count}, b.getIntegerType(bits)));
}

void nabla::storePrivateSlot(OpBuilder &b, Location loc, Value value,
                             Value slots, Value index) {
  Type type = value.getType();
  unsigned bits = slotBits(type);
  Type word = b.getIntegerType(bits);
  if (type.isIndex())
    value = arith::IndexCastOp::create(b, loc, word, value);
  else if (type != word)
    value = arith::BitcastOp::create(b, loc, word, value);
  if (bits != 64) {
    // Global slots are whole words.
    Type element = cast<MemRefType>(slots.getType()).getElementType();
    if (element != word)
      value = arith::ExtUIOp::create(b, loc, element, value);
    memref::StoreOp::create(b, loc, value, slots, index);
    return;
  }
  Type i32 = b.getI32Type();
  Value low = arith::TruncIOp::create(b, loc, i32, value);
  Value high = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(b, loc, value,
                             arith::ConstantIntOp::create(b, loc, word, 32)));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  memref::StoreOp::create(b, loc, low, slots, ValueRange{index, zero});
  memref::StoreOp::create(b, loc, high, slots, ValueRange{index, one});
}

Value nabla::loadPrivateSlot(OpBuilder &b, Location loc, Value slots,
                             Value index, Type type) {
  unsigned bits = slotBits(type);
  Type word = b.getIntegerType(bits);
  Value value;
  if (bits != 64) {
    value = memref::LoadOp::create(b, loc, slots, index);
    if (value.getType() != word)
      value = arith::TruncIOp::create(b, loc, word, value);
  } else {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value low = arith::ExtUIOp::create(
        b, loc, word,
        memref::LoadOp::create(b, loc, slots, ValueRange{index, zero}));
    Value high = arith::ExtUIOp::create(
        b, loc, word,
        memref::LoadOp::create(b, loc, slots, ValueRange{index, one}));
    value = arith::OrIOp::create(
        b, loc, low,
        arith::ShLIOp::create(b, loc, high,
                              arith::ConstantIntOp::create(b, loc, word, 32)));
  }
  if (type.isIndex())
    return arith::IndexCastOp::create(b, loc, type, value);
  if (type != word)
    return arith::BitcastOp::create(b, loc, type, value);
  return value;
}

/// True if the reverse loop can repeat `op` from the values it has (taped
/// or loop-invariant): a pure op, or a load of a function argument buffer
/// the function never writes, using no memref defined inside a region.
bool VJPEmitter::isRecomputable(Operation *op) {
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

/// `iteration` of a loop with `count` iterations, linearized after the
/// enclosing loops' slot.
Value VJPEmitter::linearize(Location loc,
                            ArrayRef<std::pair<Value, SlotCount>> enclosing,
                            Value iteration, SlotCount count) {
  if (enclosing.empty())
    return iteration;
  Value scale = materializeCount(loc, count);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, enclosing.back().first, scale),
      iteration);
}

Value VJPEmitter::materializeCount(Location loc, SlotCount count) {
  Value fixed = arith::ConstantIndexOp::create(b, loc, count.fixed);
  if (!count.isDynamic())
    return fixed;
  if (count.fixed == 1)
    return count.dynamic;
  return arith::MulIOp::create(b, loc, fixed, count.dynamic);
}

/// max(0, ceildiv(ub - lb, step)) for a positive step.
Value VJPEmitter::emitTripCount(Location loc, Value lb, Value ub, Value step) {
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

/// The old value an atomic returns, when nothing reads it: neither the
/// primal nor the reverse (only a float min/max atomic's reverse does, to
/// find the winner). Not taped: recomputing an enclosing checkpointed loop
/// skips the atomic (a write), so there would be no value to tape (difftest
/// seed 61835: "operand #0 does not dominate this use").
bool VJPEmitter::isUnneededAtomicResult(Value result) {
  auto atomic = result.getDefiningOp<memref::AtomicRMWOp>();
  return atomic && result.use_empty() &&
         !(isFloatMinMaxAtomic(atomic.getKind()) &&
           act.isVaried(atomic.getValue()));
}

void VJPEmitter::collectTaped(scf::ForOp op, SmallVector<Value> &taped,
                              SmallVector<Operation *> &recomputed) {
  // The iter_args, body results, and the values defined inside the body's
  // scf.ifs (which the forward if yields, so they exist at body level).
  // Values inside nested loops are theirs to keep. The induction variable is
  // not taped: reverseTapedFor computes it from the slot.
  taped.clear();
  llvm::append_range(taped, op.getRegionIterArgs());
  collectTapedOps(*op.getBody(), taped, recomputed);
}

void VJPEmitter::collectTapedOps(Block &body, SmallVector<Value> &taped,
                                 SmallVector<Operation *> &recomputed) {
  auto tapeResults = [&](Operation *inner) {
    for (Value r : inner->getResults())
      if (!isa<BaseMemRefType>(r.getType()) && !isUnneededAtomicResult(r))
        taped.push_back(r);
  };
  for (Operation &inner : body.without_terminator()) {
    if (isRecomputable(&inner)) {
      recomputed.push_back(&inner);
      continue;
    }
    tapeResults(&inner);
    if (isa<scf::IfOp>(inner))
      inner.walk<WalkOrder::PreOrder>([&](Operation *nested) {
        if (nested == &inner)
          return WalkResult::advance();
        // Index arithmetic on the induction variable and thread ids (a tree
        // level's partner `t + s`) is recomputed before the reverse if, not
        // taped: pure and speculatable, it may run outside its branch. Its
        // operands are taped or recomputed earlier (pre-order is program
        // order), or defined outside the loop.
        if (!nested->hasTrait<OpTrait::IsTerminator>() &&
            isRecomputable(nested) && isSpeculatable(nested)) {
          recomputed.push_back(nested);
          return WalkResult::advance();
        }
        tapeResults(nested);
        return isa<scf::ForOp, scf::WhileOp>(nested) ? WalkResult::skip()
                                                     : WalkResult::advance();
      });
  }
}

Value TapeStrategy::checkedCapacity(OpBuilder &b, Location loc) const {
  if (hinted)
    return arith::ConstantIndexOp::create(b, loc, bound);
  return largest || growing ? dynamicBound : Value();
}

LogicalResult TapeStrategy::forward(VJPEmitter &emitter, scf::ForOp op) {
  return emitter.forwardTapedFor(op, *this);
}

LogicalResult TapeStrategy::reverse(VJPEmitter &emitter, scf::ForOp op,
                                    AdjointScope &outer) {
  return emitter.reverseTapedFor(op, *this, outer);
}

Operation *VJPEmitter::findUntapeableRegion(Operation *loop) {
  Operation *found = nullptr;
  loop->walk([&](Operation *inner) {
    if (inner != loop && inner->getNumRegions() &&
        !isa<scf::IfOp, scf::ForOp, scf::WhileOp>(inner) &&
        !isGPUCollective(inner) && regionTouchesActive(inner)) {
      found = inner;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

LogicalResult VJPEmitter::forwardTapedFor(scf::ForOp op, TapeStrategy &tape) {
  Location loc = op.getLoc();
  // scf.if and loops in the body are fine: the forward if yields everything
  // its branches define, and those results are taped like any body value.
  if (Operation *unsupportedRegion = findUntapeableRegion(op))
    return unsupportedRegion->emitOpError(
        "is a region op on an active path inside a taped loop, which reverse "
        "mode does not support (scf.if, scf.for and scf.while are)");
  Value lb = fwd.lookup(op.getLowerBound());
  Value ub = fwd.lookup(op.getUpperBound());
  Value step = fwd.lookup(op.getStep());
  tape.tapes.clear();
  // A nested loop's tape has a slot per iteration of every enclosing taped
  // loop (of the innermost local sweep).
  SlotCount enclosing =
      forwardIterations.empty() ? SlotCount() : forwardIterations.back().second;
  SlotCount count = tape.slotsPerIteration();
  SlotCount slots = enclosing;
  slots.fixed *= count.fixed;
  {
    // Tapes live at function entry so that the reverse sweep, which runs
    // after every region of the forward sweep has closed, can read them.
    OpBuilder::InsertionGuard tapeGuard(b);
    if (count.isDynamic()) {
      setInsertionPointAtEntry();
      slots.dynamic = slots.dynamic ? arith::MulIOp::create(b, loc,
                                                            slots.dynamic,
                                                            count.dynamic)
                                    : count.dynamic;
      hoistAnchor = slots.dynamic.getDefiningOp()
                        ? slots.dynamic.getDefiningOp()
                        : hoistAnchor;
    }
    Value globalCount;
    if (tape.global) {
      setInsertionPointAtEntry();
      globalCount = materializeCount(loc, slots);
    } else {
      b.setInsertionPointToStart(entry);
    }
    for (Value v : tape.taped) {
      Value memref =
          tape.global
              ? createGlobalSlots(b, loc, v.getType(), globalCount)
              : createPrivateSlots(b, loc, v.getType(), slots.fixed);
      if (!memref)
        return op->emitOpError("defines a value of type ")
               << v.getType() << ", which a loop tape cannot hold";
      tape.tapes.push_back({v, memref});
    }
    if (tape.global && !tape.tapes.empty())
      hoistAnchor = tape.tapes.back().second.getDefiningOp();
  }

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
  Value local = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, loop.getInductionVar(), lb), step);
  Value iteration = linearize(loc, forwardIterations, local, count);
  forwardIterations.push_back({iteration, slots});
  // Body values are taped, not cached by enclosing regions.
  branchScopes.emplace_back();
  LogicalResult bodyResult = forwardBlock(*op.getBody());
  branchScopes.pop_back();
  forwardIterations.pop_back();
  if (failed(bodyResult))
    return failure();
  {
    // With a hint, iterations past it have no slot: they are not stored
    // (the reverse sweep detects them from the trip count).
    OpBuilder::InsertionGuard store(b);
    if (Value capacity = tape.checkedCapacity(b, loc)) {
      Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         local, capacity);
      auto guarded = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/false);
      b.setInsertionPointToStart(guarded.thenBlock());
    }
    for (auto [src, memref] : tape.tapes) {
      storePrivateSlot(b, loc, fwd.lookup(src), memref, iteration);
    }
  }
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  scf::YieldOp::create(b, loc, mapped(yield.getOperands()));
  b.setInsertionPointAfter(loop);
  for (auto [src, dst] : llvm::zip(op.getResults(), loop.getResults()))
    defined(src, dst);
  // A growing tape: a trip count past the capacity is reported to the
  // launcher, which runs the kernel again with it.
  if (tape.growing) {
    Value count = emitTripCount(loc, lb, ub, step);
    Value over = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                       count, tape.dynamicBound);
    OpBuilder::InsertionGuard report(b);
    auto guarded = scf::IfOp::create(b, loc, over, /*withElseRegion=*/false);
    b.setInsertionPointToStart(guarded.thenBlock());
    TapeOverflowOp::create(b, loc, count);
  }
  return success();
}

/// `value` where `poison` holds NaN (float values; others unchanged).
static Value poisonIf(OpBuilder &b, Location loc, Value poison, Value value) {
  auto type = dyn_cast<FloatType>(value.getType());
  if (!poison || !type)
    return value;
  Value nan = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type, APFloat::getNaN(type.getFloatSemantics())));
  return arith::SelectOp::create(b, loc, poison, nan, value);
}

LogicalResult VJPEmitter::reverseTapedFor(scf::ForOp op,
                                          const TapeStrategy &tape,
                                          AdjointScope &outer) {
  Location loc = op.getLoc();
  SmallVector<unsigned> carried;
  for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
    if (act.isVaried(arg))
      carried.push_back(i);
  SmallVector<Value> outside = usedFromOutside(op);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // The trip count again, from the bounds the reverse sweep has.
  Value count =
      emitTripCount(loc, fwd.lookup(op.getLowerBound()),
                    fwd.lookup(op.getUpperBound()), fwd.lookup(op.getStep()));
  Value exceeded;
  if (Value bound = tape.checkedCapacity(b, loc)) {
    exceeded =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, count, bound);
    count = arith::SelectOp::create(b, loc, exceeded, bound, count);
  }
  SmallVector<Value> inits;
  for (unsigned i : carried) {
    Value d = outer.get(op.getResult(i));
    inits.push_back(
        poisonIf(b, loc, exceeded,
                 d ? d : createZero(b, loc, op.getResult(i).getType())));
  }
  for (Value o : outside)
    inits.push_back(createZero(b, loc, o.getType()));
  auto loop = scf::ForOp::create(b, loc, zero, count, one, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    clearTerminator(*body);
    b.setInsertionPointToEnd(body);
    Value last = arith::SubIOp::create(b, loc, count, one);
    Value local = arith::SubIOp::create(b, loc, last, loop.getInductionVar());
    Value iteration =
        linearize(loc, reverseIterations, local, tape.slotsPerIteration());
    reverseIterations.push_back({iteration, SlotCount()});
    // Reload this iteration's values; remember the mappings to restore. The
    // induction variable is the forward loop's at this iteration.
    SmallVector<std::pair<Value, Value>> saved;
    Value inductionVar = op.getInductionVar();
    saved.push_back({inductionVar, fwd.lookupOrNull(inductionVar)});
    fwd.map(inductionVar, arith::AddIOp::create(
                              b, loc, fwd.lookup(op.getLowerBound()),
                              arith::MulIOp::create(b, loc, local,
                                                    fwd.lookup(op.getStep()))));
    for (auto [src, memref] : tape.tapes) {
      saved.push_back({src, fwd.lookupOrNull(src)});
      fwd.map(src, loadPrivateSlot(b, loc, memref, iteration, src.getType()));
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
    outer.add(b, loc, o,
              poisonIf(b, loc, exceeded, loop.getResult(carried.size() + k)));
  return success();
}

void TapeStrategy::remark(Operation *loop, int64_t bytes) const {
  if (global) {
    int64_t perSlot = 0;
    for (Value v : taped)
      perSlot += tapeSlotBytes(v.getType(), /*global=*/true);
    InFlightDiagnostic diag = loop->emitRemark()
                              << "loop reversed with a global-memory tape of "
                              << perSlot << " bytes per iteration";
    if (bound >= 0)
      diag << " (" << bound
           << " iterations) and thread, inside a loop "
              "taped there";
    else if (largest)
      diag << " and thread, sized by its largest trip count over the "
              "enclosing loops' iterations";
    else if (growing)
      diag << " and thread, nabla.tape_capacity iterations (a growing "
              "tape: its trip count is known only when it starts)";
    else
      diag << " and thread, its trip count known at run time";
    // Why memory: the last resort (docs/AD.md, loops).
    if (split)
      diag << " (split mode: nothing is recomputed)";
    else
      diag << " (its reads are overwritten, so it cannot be recomputed from "
              "checkpoints, and no static bound sizes a private tape)";
    return;
  }
  loop->emitRemark() << "loop reversed with a tape of " << bound
                     << (hinted    ? " (nabla.max_trip_count)"
                         : derived ? " (a bound of its trip count proven from "
                                     "the ranges of its bounds)"
                                   : "")
                     << " slots per enclosing iteration: " << bytes
                     << " bytes per thread";
}
