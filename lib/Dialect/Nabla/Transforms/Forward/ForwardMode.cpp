//===- ForwardMode.cpp - Forward-mode derivative emission -----------------===//
//
// JVPEmitter clones each op of the prepared callee and emits its tangent next
// to it. Memory, region, collective and call ops differentiate themselves
// through ForwardModeOpInterface (Implementations/: loads and stores of dup
// buffers read and write their shadows; scf.if, scf.for and scf.while get
// extra results and iteration values carrying tangents).
//
//===----------------------------------------------------------------------===//

#include "ForwardMode.h"

#include "ActivityAnalysis.h"
#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "Implementations/EmitterHooks.h"
#include "RecordShadows.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"
#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace nabla;

namespace {

/// Forward mode's emitter: clones each op of the prepared callee and emits
/// its tangent next to it. Ops with a ForwardModeOpInterface rule (memory,
/// regions, collectives, calls: Implementations/) emit themselves through
/// the ForwardEmitter API; views of shadowed memory and ops with scalar
/// rules (DifferentiableOpInterface) are handled here.
class JVPEmitter final : public ForwardEmitter {
public:
  JVPEmitter(OpBuilder &builder, const Activities &act, RuleFinder findRule,
             RecordShadows &records)
      : b(builder), act(act), findRule(std::move(findRule)), records(records) {}

  IRMapping map;
  DenseMap<Value, Value> tangents; // src value → tangent
  DenseMap<Value, Value> shadows;  // src memref → shadow memref

  //--- ForwardEmitter ------------------------------------------------------//

  OpBuilder &builder() override { return b; }
  bool isVaried(Value value) const override { return act.isVaried(value); }
  bool isShadowed(Value value) const override { return act.isShadowed(value); }
  bool isActive(Operation *op) const override {
    return regionTouchesActive(op, act);
  }
  Value primal(Value value) override { return map.lookup(value); }
  void setPrimal(Value value, Value primal) override { map.map(value, primal); }
  Operation *clonePrimal(Operation *op) override { return b.clone(*op, map); }
  Value shadow(Value value) override { return shadows.lookup(value); }
  void setShadow(Value value, Value shadow) override {
    shadows[value] = shadow;
  }
  Value tangent(Value value) override { return tangents.lookup(value); }
  void setTangent(Value value, Value tangent) override {
    tangents[value] = tangent;
  }
  Value tangentOrZero(Value src, Location loc) override {
    if (Value t = tangent(src))
      return t;
    return createZero(b, loc, src.getType());
  }
  LogicalResult emitBlock(Block &src) override {
    for (Operation &op : src.without_terminator())
      if (failed(emitOp(&op)))
        return failure();
    return success();
  }
  LogicalResult unsupported(Operation *op) override {
    return nabla::unsupported(op, "forward");
  }
  LogicalResult checkUnshadowedWrite(Operation *op, Value stored) override {
    return nabla::checkUnshadowedWrite(op, stored, act);
  }

  //--- Ops ------------------------------------------------------------------//

  LogicalResult emitOp(Operation *op) {
    if (auto rule = dyn_cast<ForwardModeOpInterface>(op))
      return rule.emitForwardMode(*this);
    if (op->getNumRegions() && isActive(op))
      return unsupported(op);
    Operation *clone = b.clone(*op, map);
    if (isa<ViewLikeOpInterface>(op) && op->getNumOperands() &&
        act.isShadowed(op->getOperand(0))) {
      shadows[op->getResult(0)] =
          cloneViewOfShadow(b, op, map, shadows.lookup(op->getOperand(0)));
      return success();
    }
    bool variedResult = llvm::any_of(op->getResults(),
                                     [&](Value r) { return act.isVaried(r); });
    if (!variedResult) {
      if (!readsOnlyMetadata(op) &&
          llvm::any_of(op->getOperands(),
                       [&](Value v) { return act.isShadowed(v); }))
        return unsupported(op);
      return success();
    }
    if (!hasDerivativeRule(op))
      return unsupported(op);
    if (hasZeroDerivative(op))
      return success();
    FailureOr<SmallVector<Value>> partials = emitPartials(b, clone);
    if (failed(partials))
      return unsupported(op);
    Location loc = op->getLoc();
    Value sum;
    for (auto [operand, partial] : llvm::zip(op->getOperands(), *partials)) {
      Value t = tangent(operand);
      if (!t || !partial)
        continue;
      sum = addDerivatives(b, loc, sum, scaleByPartial(b, loc, t, partial));
    }
    tangents[op->getResult(0)] =
        sum ? sum : createZero(b, loc, op->getResult(0).getType());
    return success();
  }

  /// A call with a custom forward rule: the rule computes primals and
  /// tangents (zero tangents for operands without one).
  LogicalResult emitCall(func::CallOp call) {
    Location loc = call.getLoc();
    auto [args, rets] = callActivities(call, DerivativeMode::Forward, act);
    func::FuncOp rule =
        findRule(call.getCallee(), DerivativeMode::Forward, args, rets);
    if (!rule)
      return missingRule(call, DerivativeMode::Forward, args, rets);
    SmallVector<Value> operands;
    for (auto [v, activity] : llvm::zip(call.getOperands(), args)) {
      operands.push_back(map.lookup(v));
      if (!hasShadow(activity))
        continue;
      operands.push_back(isa<BaseMemRefType>(v.getType())
                             ? shadows.lookup(v)
                             : tangentOrZero(v, loc));
    }
    auto ruleCall = func::CallOp::create(b, loc, rule, operands);
    unsigned next = 0;
    for (auto [r, activity] : llvm::zip(call.getResults(), rets)) {
      map.map(r, ruleCall.getResult(next++));
      if (hasShadow(activity))
        tangents[r] = ruleCall.getResult(next++);
    }
    return success();
  }

  /// Float min/max atomics whose tangent is written after the next barrier.
  struct PendingMinMax {
    memref::AtomicRMWOp atomic;
    Value shadow;
    SmallVector<Value> indices;
    Value tangent;
  };
  SmallVector<PendingMinMax> pendingMinMax;

  /// After a barrier (every thread's atomics of `block` are done), the
  /// thread whose atomic stored each location's final value (it saw a
  /// smaller old value and had v = final) writes its tangent there; a second
  /// barrier orders that write before the tangent's readers. Ties between
  /// equal values go to the first atomic in the hardware's order; when no
  /// atomic raised the initial value, its tangent stays.
  void emitMinMaxTangents(Block *block, Location loc) {
    bool any = false;
    for (PendingMinMax &pending : pendingMinMax) {
      if (pending.atomic->getBlock() != block)
        continue;
      any = true;
      memref::AtomicRMWOp atomic = pending.atomic;
      Value wins = emitStoredFinalValue(
          b, atomic, map.lookup(atomic.getMemref()), pending.indices,
          map.lookup(atomic.getValue()), map.lookup(atomic.getResult()));
      auto write = scf::IfOp::create(b, loc, wins, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(write.thenBlock());
      memref::StoreOp::create(b, loc, pending.tangent, pending.shadow,
                              pending.indices);
    }
    if (!any)
      return;
    llvm::erase_if(pendingMinMax, [&](const PendingMinMax &pending) {
      return pending.atomic->getBlock() == block;
    });
    gpu::BarrierOp::create(b, loc);
  }

  RecordShadows &recordShadows() { return records; }

private:
  OpBuilder &b;
  const Activities &act;
  RuleFinder findRule;
  RecordShadows &records;
};

JVPEmitter &jvp(ForwardEmitter &emitter) {
  return static_cast<JVPEmitter &>(emitter);
}

} // namespace

LogicalResult nabla::hooks::forwardCall(ForwardEmitter &emitter,
                                        func::CallOp call) {
  return jvp(emitter).emitCall(call);
}

void nabla::hooks::deferMinMaxTangent(ForwardEmitter &emitter,
                                      memref::AtomicRMWOp atomic,
                                      Value shadow) {
  jvp(emitter).pendingMinMax.push_back(
      {atomic, shadow, emitter.primals(atomic.getIndices()),
       emitter.tangentOrZero(atomic.getValue(), atomic.getLoc())});
}

void nabla::hooks::emitMinMaxTangents(ForwardEmitter &emitter, Block *block,
                                      Location loc) {
  jvp(emitter).emitMinMaxTangents(block, loc);
}

Value nabla::hooks::recordShadow(ForwardEmitter &emitter,
                                 reloc::GetGlobalOp get) {
  return jvp(emitter).recordShadows().emitShadow(emitter.builder(), get);
}

LogicalResult nabla::emitForwardDerivative(
    OpBuilder &builder, Block &body, func::ReturnOp ret, const Activities &act,
    ArrayRef<Activity> args, ArrayRef<Activity> rets,
    ArrayRef<Value> primalArgs, ArrayRef<Value> shadowArgs, RuleFinder findRule,
    RecordShadows &records) {
  JVPEmitter emitter(builder, act, std::move(findRule), records);
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    emitter.map.map(arg, primalArgs[i]);
    if (!shadowArgs[i])
      continue;
    if (isa<BaseMemRefType>(arg.getType()))
      emitter.shadows[arg] = shadowArgs[i];
    else
      emitter.tangents[arg] = shadowArgs[i];
  }
  if (failed(emitter.emitBlock(body)))
    return failure();
  SmallVector<Value> results;
  for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
    if (rets[j] != Activity::DupNoNeed)
      results.push_back(emitter.map.lookup(v));
    if (hasShadow(rets[j])) {
      if (isa<BaseMemRefType>(v.getType())) {
        Value sh = emitter.shadows.lookup(v);
        if (!sh)
          return ret.emitOpError("returns a buffer without a shadow as dup");
        results.push_back(sh);
      } else {
        results.push_back(emitter.tangentOrZero(v, ret.getLoc()));
      }
    }
  }
  func::ReturnOp::create(builder, ret.getLoc(), results);
  return success();
}
