//===- ForwardSweep.cpp - The forward sweep of reverse mode ---------------===//
//
// The primal again, op by op, keeping what the reverse sweep needs. Ops with
// a ReverseModeOpInterface rule (Implementations/) emit their own forward
// sweep; here: scf.if results yield every value their branches define (the
// rule's hook), shadows of allocations, records and views are created where
// the reverse sweep can reach them.
//
//===----------------------------------------------------------------------===//

#include "Implementations/EmitterHooks.h"
#include "ReverseEmitter.h"

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

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

/// The shadow of src memref `memref` at the current point: a view taken
/// inside a region is taken again from its source's shadow.
Value VJPEmitter::shadowOf(Value memref) {
  auto it = branchViews.find(memref);
  if (it == branchViews.end())
    return shadows.lookup(memref);
  Operation *view = it->second;
  return cloneViewOfShadow(b, view, fwd, shadowOf(view->getOperand(0)));
}

void VJPEmitter::defined(Value src, Value forward) {
  fwd.map(src, forward);
  if (!branchScopes.empty())
    branchScopes.back().push_back(src);
}

/// Sorts the uses of `memref` (through views) into writes that read nothing
/// (stores into it, atomic adds whose old value is unused) and reads (loads,
/// atomics whose old value is used); false if some use is neither (a call,
/// an unknown op), `memref.dim` aside.
static bool sortAccesses(Value memref, SmallVector<Operation *> &writes,
                         SmallVector<Operation *> &reads) {
  for (OpOperand &use : memref.getUses()) {
    Operation *user = use.getOwner();
    if (auto store = dyn_cast<memref::StoreOp>(user)) {
      if (use.get() != store.getMemRef() || use.get() == store.getValue())
        return false;
      writes.push_back(user);
    } else if (auto atomic = dyn_cast<memref::AtomicRMWOp>(user)) {
      if (atomic.getKind() != arith::AtomicRMWKind::addf)
        return false;
      (atomic.getResult().use_empty() ? writes : reads).push_back(user);
    } else if (isa<memref::LoadOp>(user)) {
      reads.push_back(user);
    } else if (auto view = dyn_cast<ViewLikeOpInterface>(user);
               view && view.getViewSource() == use.get()) {
      for (Value result : user->getResults())
        if (!sortAccesses(result, writes, reads))
          return false;
    } else if (!isa<memref::DimOp>(user)) {
      return false;
    }
  }
  return true;
}

/// True if `read` comes before `write` in program order and no loop holds
/// both (a later iteration would read what `write` stored).
static bool readsBefore(Operation *read, Operation *write) {
  for (Operation *loop = read->getParentOp(); loop; loop = loop->getParentOp())
    if (isa<LoopLikeOpInterface>(loop) && loop->isAncestor(write))
      return false;
  // The ancestors of both in their innermost common block.
  Operation *w = write;
  while (w && !w->isAncestor(read) &&
         !w->getBlock()->findAncestorOpInBlock(*read))
    w = w->getParentOp();
  if (!w || w->isAncestor(read))
    return false;
  Operation *r = w->getBlock()->findAncestorOpInBlock(*read);
  return r != w && r->isBeforeInBlock(w);
}

void VJPEmitter::collectUnneededBuffers(Block &body, ArrayRef<Activity> args) {
  for (auto [arg, activity] : llvm::zip(body.getArguments(), args)) {
    if (activity != Activity::DupNoNeed || !isa<BaseMemRefType>(arg.getType()))
      continue;
    SmallVector<Operation *> writes, reads;
    if (!sortAccesses(arg, writes, reads))
      continue;
    // A write no read can observe is dropped: every read of the buffer comes
    // before it (y = a x + y reads y[i], then stores it).
    for (Operation *write : writes)
      if (llvm::all_of(
              reads, [&](Operation *read) { return readsBefore(read, write); }))
        unneededWrites.insert(write);
  }
}

LogicalResult VJPEmitter::forwardBlock(Block &src) {
  // Forward code, also when a loop strategy recomputes it during the reverse
  // sweep: rules that emit nested blocks get the forward sweep's.
  AdjointScope *reverseScope = scope;
  scope = nullptr;
  LogicalResult result = success();
  for (Operation &op : src.without_terminator())
    if (failed(forwardOp(&op))) {
      result = failure();
      break;
    }
  scope = reverseScope;
  return result;
}

Operation *VJPEmitter::clonePrimal(Operation *op) {
  // A write to a dupnoneed buffer that no read observes is not needed: it
  // matters only through its adjoint (the reverse sweep's shadow reads).
  if (unneededWrites.contains(op))
    return nullptr;
  // Recomputing a checkpointed loop's iteration repeats no write to memory
  // from outside it (cloneRecomputed also skips those in nested regions).
  Operation *clone =
      recomputeRoot ? cloneRecomputed(op, fwd) : b.clone(*op, fwd);
  if (!clone)
    return nullptr;
  for (auto [src, dst] : llvm::zip(op->getResults(), clone->getResults()))
    defined(src, dst);
  return clone;
}

LogicalResult VJPEmitter::forwardOp(Operation *op) {
  if (auto rule = dyn_cast<ReverseModeOpInterface>(op))
    return rule.emitForwardSweep(*this);
  if (op->getNumRegions() && isActive(op))
    return op->emitOpError("is not supported yet by reverse mode on an "
                           "active path");
  if (!clonePrimal(op))
    return success();
  if (isa<ViewLikeOpInterface>(op) && op->getNumOperands() &&
      act.isShadowed(op->getOperand(0))) {
    // Inside a region the shadow's view would not reach the reverse sweep:
    // it is taken there, where each use needs it, from cached operands.
    if (!branchScopes.empty()) {
      branchViews[op->getResult(0)] = op;
      return success();
    }
    shadows[op->getResult(0)] =
        cloneViewOfShadow(b, op, fwd, shadowOf(op->getOperand(0)));
  }
  return success();
}

/// The shadow of a relocation record's object. The reverse sweep runs
/// outside every region: the shadow's use (it has no operands) goes to the
/// entry block.
void nabla::hooks::recordShadow(ReverseEmitter &emitter,
                                reloc::GetGlobalOp get) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  OpBuilder &b = emitter.builder();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(vjp.entry);
  emitter.setShadow(get.getResult(), vjp.recordShadows().emitShadow(b, get));
}

/// The shadow of a private allocation. The reverse sweep needs it after
/// every region closed: inside one it lives at function entry, which needs a
/// static shape.
LogicalResult nabla::hooks::allocaShadow(ReverseEmitter &emitter,
                                         memref::AllocaOp alloca) {
  auto &vjp = static_cast<VJPEmitter &>(emitter);
  OpBuilder &b = emitter.builder();
  OpBuilder::InsertionGuard guard(b);
  if (!vjp.branchScopes.empty()) {
    if (!alloca.getType().hasStaticShape())
      return alloca.emitOpError("is a dynamically sized allocation holding "
                                "differentiated data inside a region; "
                                "reverse mode needs its shadow at function "
                                "level (use a static shape or hoist it)");
    b.setInsertionPointToStart(vjp.entry);
  }
  emitter.setShadow(alloca.getResult(),
                    createZeroedAllocation(
                        b, alloca, emitter.primals(alloca.getDynamicSizes())));
  return success();
}

LogicalResult nabla::hooks::forwardSweepIf(ReverseEmitter &emitter,
                                           scf::IfOp op) {
  return static_cast<VJPEmitter &>(emitter).forwardIf(op);
}

LogicalResult nabla::hooks::forwardSweepFor(ReverseEmitter &emitter,
                                            scf::ForOp op) {
  return static_cast<VJPEmitter &>(emitter).forwardFor(op);
}

LogicalResult nabla::hooks::forwardSweepWhile(ReverseEmitter &emitter,
                                              scf::WhileOp op) {
  return static_cast<VJPEmitter &>(emitter).forwardWhile(op);
}

/// Clones an scf.if and yields every value defined in its branches, so
/// that the reverse sweep can use them after the if.
LogicalResult VJPEmitter::forwardIf(scf::IfOp op) {
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
    Block &dst =
        k == 0 ? newIf.getThenRegion().front() : newIf.getElseRegion().front();
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

SmallVector<Value> VJPEmitter::mapped(ValueRange values) {
  return llvm::map_to_vector(values, [&](Value v) { return fwd.lookup(v); });
}
