//===- ReverseSweep.cpp - The reverse sweep of reverse mode ---------------===//
//
// Adjoints op by op in reverse order. Ops with a ReverseModeOpInterface rule
// (Implementations/: stores, loads, atomics, calls with custom rules,
// scf.if and loops, barriers replayed at the mirrored point, collectives)
// emit their own; ops with scalar rules (DifferentiableOpInterface) are
// handled here. Also here: the hooks those rules reach the emitter through
// (min/max atomics, custom reverse rules, the reversed scf.if).
//
//===----------------------------------------------------------------------===//

#include "Implementations/EmitterHooks.h"
#include "ReverseEmitter.h"

#include "ActivityAnalysis.h"
#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "RecordShadows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace nabla;

LogicalResult VJPEmitter::reverseBlock(Block &src, AdjointScope &scope) {
  for (Operation &op : llvm::reverse(src.without_terminator()))
    if (failed(reverseOp(&op, scope)))
      return failure();
  return success();
}

LogicalResult VJPEmitter::reverseOp(Operation *op, AdjointScope &opScope) {
  AdjointScope *saved = scope;
  scope = &opScope;
  LogicalResult result = reverseOpInScope(op);
  scope = saved;
  return result;
}

LogicalResult VJPEmitter::reverseOpInScope(Operation *op) {
  if (auto rule = dyn_cast<ReverseModeOpInterface>(op))
    return rule.emitReverseSweep(*this);
  if (op->getNumRegions() && !isActive(op))
    return success();
  bool variedResult =
      llvm::any_of(op->getResults(), [&](Value r) { return act.isVaried(r); });
  if (!variedResult) {
    if (!isa<ViewLikeOpInterface>(op) && !readsOnlyMetadata(op) &&
        llvm::any_of(op->getOperands(),
                     [&](Value v) { return act.isShadowed(v); }))
      return unsupported(op);
    return success();
  }
  if (!hasDerivativeRule(op))
    return unsupported(op);
  Value d = adjoint(op->getResult(0));
  if (!d || hasZeroDerivative(op))
    return success();
  // Partials are computed on a clone at the current point; its result is
  // replaced by the forward value when the sweep has one. (Cloning records
  // the clone in `fwd`, so the forward mapping is restored afterwards.)
  Location loc = op->getLoc();
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
    return unsupported(op);
  for (auto [operand, partial] : llvm::zip(op->getOperands(), *partials))
    if (partial && act.isVaried(operand))
      addAdjoint(operand, scaleByPartial(b, loc, d, partial));
  return success();
}

Value VJPEmitter::readShadow(Location loc, Value memref, Value shadow,
                             ValueRange indices) {
  auto d = memref::LoadOp::create(b, loc, shadow, indices);
  shadowReads.push_back({d, memref});
  return d;
}

LogicalResult nabla::hooks::reverseSweepIf(ReverseEmitter &emitter,
                                           scf::IfOp op) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  return vjp.reverseIf(op, *vjp.scope);
}

LogicalResult nabla::hooks::reverseCall(ReverseEmitter &emitter,
                                        func::CallOp call) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  return vjp.reverseCall(call, *vjp.scope);
}

LogicalResult nabla::hooks::reverseMinMaxAtomic(ReverseEmitter &emitter,
                                                memref::AtomicRMWOp atomic,
                                                Value shadow) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  return vjp.reverseAtomicMinMax(atomic, shadow, *vjp.scope);
}

// The reverse sweep replays each barrier at the mirrored point: adjoints
// written to workgroup shadows before it are read by other threads after.
void nabla::hooks::replayBarrier(ReverseEmitter &emitter, Location loc) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  vjp.replayedBarriers.push_back(
      gpu::BarrierOp::create(emitter.builder(), loc));
}

/// r = atomic max(v, M[i]): the location's final value F came from the
/// one thread (and iteration) whose atomic stored it, the one that saw a
/// smaller old value and had v = F; that atomic takes the location's
/// cotangent and zeroes it. Ties between equal values thus go to the
/// first atomic in the order the hardware performed them; when no atomic
/// raised the initial value, the cotangent stays with it.
LogicalResult VJPEmitter::reverseAtomicMinMax(memref::AtomicRMWOp atomic,
                                              Value shadowMemref,
                                              AdjointScope &scope) {
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

/// A call with a custom reverse rule: the forward sweep ran the primal
/// call; here the rule gets the primal arguments, the shadows and the
/// results' adjoints as seeds, and returns the active arguments' gradients.
LogicalResult VJPEmitter::reverseCall(func::CallOp call, AdjointScope &scope) {
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
SmallVector<Value> VJPEmitter::usedFromOutside(Operation *op) {
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

LogicalResult VJPEmitter::reverseIf(scf::IfOp op, AdjointScope &outer) {
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
