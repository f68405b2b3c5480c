//===- ActivityAnalysis.cpp - Activities and shared AD helpers ------------===//
//
// The fixpoint of the activity analysis: float values that depend on an
// active input are varied; dup arguments, their views, writable relocated
// objects and allocations that receive varied data are shadowed.
//
//===----------------------------------------------------------------------===//

#include "ActivityAnalysis.h"

#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "RecordShadows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace nabla;

bool nabla::isFloatLike(Type type) { return isDifferentiableScalarType(type); }

/// The memref.alloca `memref` is (through views), or null.
Value nabla::getViewSource(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (!isa<ViewLikeOpInterface>(def) || def->getNumOperands() == 0)
      break;
    memref = def->getOperand(0);
  }
  return memref;
}

memref::AllocaOp nabla::getAllocation(Value memref) {
  return getViewSource(memref).getDefiningOp<memref::AllocaOp>();
}

/// Creates, at `b`, a zero-filled allocation like `alloca` (dynamic sizes
/// `sizes`): the shadow of a private buffer.
Value nabla::createZeroedAllocation(OpBuilder &b, memref::AllocaOp alloca,
                                    ValueRange sizes) {
  Location loc = alloca.getLoc();
  MemRefType type = alloca.getType();
  Value shadow = memref::AllocaOp::create(b, loc, type, sizes).getResult();
  Value zero = createZero(b, loc, type.getElementType());
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> indices;
  OpBuilder::InsertionGuard guard(b);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value extent = memref::DimOp::create(b, loc, shadow, d);
    auto loop = scf::ForOp::create(b, loc, c0, extent, c1);
    b.setInsertionPointToStart(loop.getBody());
    indices.push_back(loop.getInductionVar());
  }
  memref::StoreOp::create(b, loc, zero, shadow, indices);
  return shadow;
}

void nabla::Activities::propagate(func::FuncOp func) {
  bool changed = true;
  auto mark = [&](DenseSet<Value> &set, Value v) {
    changed |= set.insert(v).second;
  };
  while (changed) {
    changed = false;
    func.walk([&](Operation *op) {
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (isShadowed(load.getMemRef()) && isFloatLike(load.getType()))
          mark(varied, load.getResult());
        return;
      }
      if (isa<ViewLikeOpInterface>(op) && op->getNumOperands() &&
          isShadowed(op->getOperand(0))) {
        for (Value r : op->getResults())
          mark(shadowed, r);
        return;
      }
      if (auto yield = dyn_cast<scf::YieldOp>(op)) {
        Operation *parent = op->getParentOp();
        for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
          if (!isVaried(v))
            continue;
          if (isa<scf::IfOp, scf::ForOp>(parent))
            mark(varied, parent->getResult(i));
          if (auto loop = dyn_cast<scf::ForOp>(parent))
            mark(varied, loop.getRegionIterArgs()[i]);
          if (auto loop = dyn_cast<scf::WhileOp>(parent))
            mark(varied, loop.getBeforeArguments()[i]);
        }
        return;
      }
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        // A loop that runs zero times returns its inits: a varied init makes
        // the result varied even if the body never uses it (found by
        // difftest).
        for (auto [init, arg, result] :
             llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                       loop.getResults()))
          if (isVaried(init)) {
            mark(varied, arg);
            mark(varied, result);
          }
        return;
      }
      if (auto loop = dyn_cast<scf::WhileOp>(op)) {
        for (auto [init, arg] :
             llvm::zip(loop.getInits(), loop.getBeforeArguments()))
          if (isVaried(init))
            mark(varied, arg);
        return;
      }
      if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
        auto loop = cast<scf::WhileOp>(op->getParentOp());
        for (auto [i, v] : llvm::enumerate(condition.getArgs()))
          if (isVaried(v)) {
            mark(varied, loop.getAfterArguments()[i]);
            mark(varied, loop.getResult(i));
          }
        return;
      }
      if (isa<memref::StoreOp, memref::AtomicRMWOp>(op)) {
        // Differentiated data stored into a writable relocated object makes
        // the object active: every use of its record gets a shadow.
        // So does a private allocation (it gets a shadow allocation).
        Value memref = op->getOperand(1);
        if (!isVaried(op->getOperand(0)) || isShadowed(memref))
          return;
        if (reloc::GlobalOp record = RecordShadows::getWritableRecord(memref))
          func.walk([&](reloc::GetGlobalOp get) {
            if (get.getGlobalName() == record.getSymName())
              mark(shadowed, get.getResult());
          });
        else if (memref::AllocaOp alloca = getAllocation(memref))
          mark(shadowed, alloca.getResult());
        return;
      }
      if (op->getNumRegions() && !isGPUCollective(op))
        return;
      // Another dialect's op that reads differentiated memory (declared with
      // a MemRead effect on the memref) computes from it, as a call does.
      auto readsShadowed = [&](Value v) {
        if (!isShadowed(v))
          return false;
        if (isa<func::CallOp>(op))
          return true;
        auto effects = dyn_cast<MemoryEffectOpInterface>(op);
        return effects &&
               effects.getEffectOnValue<MemoryEffects::Read>(v).has_value();
      };
      bool anyVaried = llvm::any_of(op->getOperands(), [&](Value v) {
        return isVaried(v) || readsShadowed(v);
      });
      if (anyVaried && !hasZeroDerivative(op))
        for (Value r : op->getResults())
          if (isFloatLike(r.getType()))
            mark(varied, r);
    });
  }
}

/// Reports an op on an active path that has no derivative rule.
LogicalResult nabla::unsupported(Operation *op, StringRef mode) {
  return op->emitOpError("has no ")
         << mode
         << "-mode derivative rule and is on an active path (it depends on or "
            "writes differentiated data)";
}

/// True if `op` touches differentiated data: a varied operand or result, or
/// a memref operand with a shadow.
bool nabla::touchesActiveData(Operation *op, const Activities &act) {
  for (Value v : op->getOperands())
    if (act.isVaried(v) || act.isShadowed(v))
      return true;
  for (Value v : op->getResults())
    if (act.isVaried(v))
      return true;
  return false;
}

bool nabla::regionTouchesActive(Operation *op, const Activities &act) {
  bool touches = false;
  op->walk([&](Operation *inner) {
    touches |= touchesActiveData(inner, act);
    return touches ? WalkResult::interrupt() : WalkResult::advance();
  });
  return touches;
}

/// The activities of `call`'s arguments and results in `mode`, from the
/// activity analysis: shadowed memrefs are dup; varied floats are active
/// (reverse) or dup (forward); everything else const.
std::pair<SmallVector<Activity>, SmallVector<Activity>>
nabla::callActivities(func::CallOp call, DerivativeMode mode,
                      const Activities &act) {
  Activity scalar =
      mode == DerivativeMode::Reverse ? Activity::Active : Activity::Dup;
  SmallVector<Activity> args, rets;
  for (Value v : call.getOperands())
    args.push_back(act.isShadowed(v) ? Activity::Dup
                   : act.isVaried(v) ? scalar
                                     : Activity::Const);
  for (Value r : call.getResults())
    rets.push_back(act.isVaried(r) ? scalar : Activity::Const);
  return {args, rets};
}

/// Reports a call on an active path without a matching custom rule.
LogicalResult nabla::missingRule(func::CallOp call, DerivativeMode mode,
                                 ArrayRef<Activity> args,
                                 ArrayRef<Activity> rets) {
  InFlightDiagnostic diag =
      call.emitOpError("calls @")
      << call.getCallee() << ", whose "
      << (mode == DerivativeMode::Reverse ? "reverse" : "forward")
      << " custom derivatives do not cover activities [";
  llvm::interleaveComma(args, diag,
                        [&](Activity a) { diag << stringifyActivity(a); });
  diag << "] -> [";
  llvm::interleaveComma(rets, diag,
                        [&](Activity a) { diag << stringifyActivity(a); });
  return diag << "]";
}

/// A write into a buffer without a shadow is fine unless the written value is
/// differentiated: then its derivative would be silently lost.
LogicalResult nabla::checkUnshadowedWrite(Operation *op, Value value,
                                          const Activities &act) {
  if (!act.isVaried(value))
    return success();
  // Heap memory the function allocates is not the caller's to mark: its
  // derivative must flow, and reverse mode shadows private memory only.
  Value buffer = isa<memref::AtomicRMWOp>(op)
                     ? cast<memref::AtomicRMWOp>(op).getMemref()
                     : op->getOperand(1);
  if (auto alloc = getViewSource(buffer).getDefiningOp<memref::AllocOp>()) {
    InFlightDiagnostic diag =
        op->emitOpError(isa<memref::AtomicRMWOp>(op) ? "accumulates"
                                                     : "stores")
        << " a differentiated value into heap memory (memref.alloc), which "
           "AD gives no shadow; run --nabla-promote-private-allocs first "
           "(every nabla-to-* pipeline and nabla-compile do): it turns an "
           "allocation of static shape into private memory (memref.alloca)";
    diag.attachNote(alloc.getLoc()) << "allocated here";
    return diag;
  }
  // Dynamic shared memory the function views itself is the function's own
  // scratch, not the caller's to mark: nothing gives it a shadow here.
  if (auto region = getViewSource(buffer)
                        .getDefiningOp<gpu::DynamicSharedMemoryOp>()) {
    InFlightDiagnostic diag =
        op->emitOpError(isa<memref::AtomicRMWOp>(op) ? "accumulates"
                                                     : "stores")
        << " a differentiated value into dynamic shared memory "
           "(gpu.dynamic_shared_memory) that the differentiated function "
           "views itself, which AD gives no shadow: pass the view in as a "
           "parameter with a shadow (as the LLVM IR frontend's gradient "
           "requests do: the shadow follows the primal in the launch's "
           "region); nabla.kernel_adjoint cannot shadow it yet";
    diag.attachNote(region.getLoc()) << "the dynamic shared memory";
    return diag;
  }
  // A module global (a `__device__` variable) is nobody's to mark: Enzyme
  // refuses an active global without a shadow, and so does Nabla.
  if (auto get =
          getViewSource(buffer).getDefiningOp<memref::GetGlobalOp>()) {
    InFlightDiagnostic diag =
        op->emitOpError(isa<memref::AtomicRMWOp>(op) ? "accumulates"
                                                     : "stores")
        << " a differentiated value into module global @" << get.getName()
        << " (a `__device__` variable), which AD gives no shadow: the "
           "value's derivative would be lost; pass the memory to the "
           "differentiated function as a buffer parameter (dup) instead";
    if (auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            get, get.getNameAttr()))
      diag.attachNote(global.getLoc()) << "the global";
    return diag;
  }
  // Enzyme's rule: memory the request marks constant (`const`,
  // `enzyme_const`) is inactive, also where differentiated values are written
  // into it; what flows through it carries no derivative. Said, not hidden.
  op->emitRemark(isa<memref::AtomicRMWOp>(op) ? "accumulates" : "stores")
      << " a differentiated value into a buffer without a shadow (marked "
         "const): the buffer is inactive, as in Enzyme, and the value's "
         "derivative does not flow through it; mark the buffer dup to "
         "differentiate through it";
  return success();
}

bool nabla::isNeverWritten(BlockArgument arg) {
  Region *body = arg.getOwner()->getParent();
  WalkResult result = body->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (!isa<MemRefType>(operand.getType()) || getViewSource(operand) != arg)
        continue;
      if (isa<CallOpInterface>(op))
        return WalkResult::interrupt();
      if (op->hasTrait<OpTrait::IsTerminator>() || isa<ViewLikeOpInterface>(op))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects ||
          effects.getEffectOnValue<MemoryEffects::Write>(operand).has_value())
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Drops the terminator an op builder may have put into a new region block,
/// so the emitters can fill the block and add their own.
void nabla::clearTerminator(Block &block) {
  if (!block.empty() && block.mightHaveTerminator())
    block.getTerminator()->erase();
}

bool nabla::readsOnlyMetadata(Operation *op) {
  return isa<memref::DimOp, memref::RankOp, memref::ExtractStridedMetadataOp>(
      op);
}

Value nabla::cloneViewOfShadow(OpBuilder &b, Operation *view,
                               const IRMapping &mapping, Value shadowSource) {
  IRMapping viewMapping = mapping;
  viewMapping.map(view->getOperand(0), shadowSource);
  return b.clone(*view, viewMapping)->getResult(0);
}

bool nabla::isFloatMinMaxAtomic(arith::AtomicRMWKind kind) {
  using arith::AtomicRMWKind;
  return llvm::is_contained({AtomicRMWKind::maximumf, AtomicRMWKind::minimumf,
                             AtomicRMWKind::maxnumf, AtomicRMWKind::minnumf},
                            kind);
}

/// True if `op` is inside a loop (of the function): it may run again after
/// itself.
static bool isInLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p && !isa<func::FuncOp>(p);
       p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p))
      return true;
  return false;
}

/// True if `write` happens before `atomic` in every thread's program order:
/// an ancestor of it precedes an ancestor of `atomic` in a block no loop
/// encloses (in a loop, the next iteration writes after).
static bool isBefore(Operation *write, Operation *atomic) {
  for (Operation *mine = atomic; mine && !isa<func::FuncOp>(mine);
       mine = mine->getParentOp()) {
    Operation *theirs = mine->getBlock()->findAncestorOpInBlock(*write);
    if (!theirs)
      continue;
    if (theirs == mine || !theirs->isBeforeInBlock(mine))
      return false;
    return !isInLoop(mine);
  }
  return false;
}

/// Reverse mode finds the winner of a min/max atomic by comparing with the
/// location's final value. Same-kind atomics compose (the final value is
/// the extremum of all of them), unless a read sees the value in between:
/// the read's cotangent belongs to the winner up to that point, which a
/// later atomic may have replaced by the end (difftest seed 1026: dX = 0
/// instead of 7). That case is an error rather than a wrong gradient.
static LogicalResult checkReadBetweenMinMaxAtomics(memref::AtomicRMWOp atomic,
                                                   Value buffer,
                                                   Operation *function) {
  SmallVector<Operation *> later, reads;
  function->walk([&](Operation *op) {
    if (auto other = dyn_cast<memref::AtomicRMWOp>(op);
        other && other.getKind() == atomic.getKind() &&
        getViewSource(other.getMemref()) == buffer) {
      if (op == atomic.getOperation() ? isInLoop(op) : !isBefore(op, atomic))
        later.push_back(op);
      return;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || isBefore(op, atomic))
      return;
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    if (llvm::any_of(list, [&](MemoryEffects::EffectInstance &effect) {
          return isa<MemoryEffects::Read>(effect.getEffect()) &&
                 effect.getValue() &&
                 getViewSource(effect.getValue()) == buffer;
        }))
      reads.push_back(op);
  });
  for (Operation *read : reads)
    for (Operation *next : later)
      if (!isBefore(next, read)) {
        InFlightDiagnostic diag =
            atomic.emitOpError("has no reverse-mode derivative when its "
                               "buffer is read before a later ")
            << arith::stringifyAtomicRMWKind(atomic.getKind())
            << " atomic may change it: the winner is found from the final "
               "value (read the buffer after the last atomic, or use two "
               "buffers)";
        diag.attachNote(read->getLoc()) << "read here";
        diag.attachNote(next->getLoc()) << "later atomic here";
        return diag;
      }
  return success();
}

LogicalResult nabla::checkMinMaxAtomic(memref::AtomicRMWOp atomic,
                                       StringRef mode, bool sameBlock) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      atomic.getMemRefType().getMemorySpace());
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
    return atomic.emitOpError("has no ")
           << mode
           << "-mode derivative on global memory: the derivative goes to "
              "the thread that stored the final value, which no barrier can "
              "establish across the grid (use a workgroup buffer followed by "
              "gpu.barrier, or a separate kernel)";
  bool barrierAfter = false;
  for (Operation *at = atomic; at && !isa<func::FuncOp>(at) && !barrierAfter;
       at = sameBlock ? nullptr : at->getParentOp())
    for (Operation *next = at->getNextNode(); next && !barrierAfter;
         next = next->getNextNode())
      barrierAfter = isa<gpu::BarrierOp>(next);
  if (!barrierAfter)
    return atomic.emitOpError("needs a gpu.barrier after it ")
           << (sameBlock ? "in the same block"
                         : "(in its block or an "
                           "enclosing one)")
           << " for " << mode
           << " mode: the winning thread is known once every thread's "
              "atomic is done";
  Value buffer = getViewSource(atomic.getMemref());
  Operation *function = atomic->getParentOfType<func::FuncOp>();
  Operation *conflict = nullptr;
  function->walk([&](Operation *op) {
    if (auto other = dyn_cast<memref::AtomicRMWOp>(op);
        other && other.getKind() == atomic.getKind())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &effect : list)
      if (isa<MemoryEffects::Write>(effect.getEffect()) && effect.getValue() &&
          getViewSource(effect.getValue()) == buffer && !isBefore(op, atomic)) {
        conflict = op;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (conflict) {
    InFlightDiagnostic diag =
        atomic.emitOpError("needs its buffer's final value in ")
        << mode
        << " mode, but another op may write the "
           "buffer after it";
    diag.attachNote(conflict->getLoc()) << "written here";
    return diag;
  }
  if (mode == "reverse")
    return checkReadBetweenMinMaxAtomics(atomic, buffer, function);
  return success();
}

Value nabla::emitStoredFinalValue(OpBuilder &b, memref::AtomicRMWOp atomic,
                                  Value memref, ValueRange indices, Value value,
                                  Value old) {
  Location loc = atomic.getLoc();
  Value final = memref::LoadOp::create(b, loc, memref, indices);
  using arith::AtomicRMWKind;
  bool isMax = atomic.getKind() == AtomicRMWKind::maximumf ||
               atomic.getKind() == AtomicRMWKind::maxnumf;
  Value stored =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, value, final);
  Value raised = arith::CmpFOp::create(
      b, loc, isMax ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT,
      old, value);
  return arith::AndIOp::create(b, loc, stored, raised);
}
