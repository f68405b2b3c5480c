//===- ForwardMode.cpp - Forward-mode derivative emission -----------------===//
//
// JVPEmitter clones each op of the prepared callee and emits its tangent next
// to it; scf.if, scf.for and scf.while get extra results and iteration
// values carrying tangents; loads and stores of dup buffers read and write
// their shadows.
//
//===----------------------------------------------------------------------===//

#include "ForwardMode.h"

#include "ActivityAnalysis.h"
#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "RecordShadows.h"

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
//===----------------------------------------------------------------------===//
// Forward mode
//===----------------------------------------------------------------------===//

class JVPEmitter {
public:
  JVPEmitter(OpBuilder &builder, const Activities &act, RuleFinder findRule,
             RecordShadows &records)
      : b(builder), act(act), findRule(std::move(findRule)), records(records) {}

  IRMapping map;
  DenseMap<Value, Value> tangent; // src value → tangent
  DenseMap<Value, Value> shadow;  // src memref → shadow memref

  Value tangentOf(Value src) { return tangent.lookup(src); }

  SmallVector<Value> mapAll(ValueRange values) {
    return llvm::map_to_vector(values, [&](Value v) { return map.lookup(v); });
  }

  /// Tangent of `src`, materializing a zero if it has none.
  Value tangentOrZero(Value src, Location loc) {
    if (Value t = tangentOf(src))
      return t;
    return createZero(b, loc, src.getType());
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

  LogicalResult emitBlock(Block &src) {
    for (Operation &op : src.without_terminator())
      if (failed(emitOp(&op)))
        return failure();
    return success();
  }

  LogicalResult emitOp(Operation *op) {
    Location loc = op->getLoc();
    if (auto ifOp = dyn_cast<scf::IfOp>(op))
      return emitIf(ifOp);
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return emitFor(loop);
    if (auto loop = dyn_cast<scf::WhileOp>(op))
      return emitWhile(loop);
    // (gpu.all_reduce holds a combiner region: a collective, not control
    // flow.)
    if (op->getNumRegions() && !isGPUCollective(op) &&
        touchesActiveData(op, act))
      return unsupported(op, "forward");
    if (auto call = dyn_cast<func::CallOp>(op);
        call && touchesActiveData(op, act))
      return emitCall(call);

    Operation *clone = b.clone(*op, map);
    if (isa<gpu::BarrierOp>(op)) {
      emitMinMaxTangents(op->getBlock(), loc);
      return success();
    }
    if (isGPUCollective(op)) {
      if (!act.isVaried(op->getResult(0)))
        return success();
      FailureOr<Value> t = emitCollectiveTangent(
          b, op, clone->getOperands(), clone->getResult(0),
          tangentOrZero(op->getOperand(0), loc));
      if (failed(t))
        return failure();
      tangent[op->getResult(0)] = *t;
      return success();
    }
    if (auto get = dyn_cast<reloc::GetGlobalOp>(op)) {
      if (act.isShadowed(get.getResult()))
        shadow[get.getResult()] = records.emitShadow(b, get);
      return success();
    }
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      if (act.isShadowed(alloca.getResult()))
        shadow[alloca.getResult()] =
            createZeroedAllocation(b, alloca, mapAll(alloca.getDynamicSizes()));
      return success();
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (Value sh = shadow.lookup(load.getMemRef()))
        if (act.isVaried(load.getResult()))
          tangent[load.getResult()] =
              memref::LoadOp::create(b, loc, sh, mapAll(load.getIndices()));
      return success();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value sh = shadow.lookup(store.getMemRef());
      if (!sh)
        return checkUnshadowedWrite(op, store.getValue(), act);
      if (isFloatLike(store.getValue().getType()))
        memref::StoreOp::create(b, loc, tangentOrZero(store.getValue(), loc),
                                sh, mapAll(store.getIndices()));
      return success();
    }
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
      Value sh = shadow.lookup(atomic.getMemref());
      if (!sh)
        return checkUnshadowedWrite(op, atomic.getValue(), act);
      if (isFloatMinMaxAtomic(atomic.getKind())) {
        if (failed(checkMinMaxAtomic(atomic, "forward", /*sameBlock=*/true)))
          return failure();
        pendingMinMax.push_back({atomic, sh, mapAll(atomic.getIndices()),
                                 tangentOrZero(atomic.getValue(), loc)});
        return success();
      }
      if (atomic.getKind() != arith::AtomicRMWKind::addf)
        return unsupported(op, "forward");
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf,
                                  tangentOrZero(atomic.getValue(), loc), sh,
                                  mapAll(atomic.getIndices()));
      return success();
    }
    if (isa<ViewLikeOpInterface>(op) && op->getNumOperands() &&
        act.isShadowed(op->getOperand(0))) {
      shadow[op->getResult(0)] =
          cloneViewOfShadow(b, op, map, shadow.lookup(op->getOperand(0)));
      return success();
    }

    bool variedResult = llvm::any_of(op->getResults(),
                                     [&](Value r) { return act.isVaried(r); });
    if (!variedResult) {
      if (!readsOnlyMetadata(op) &&
          llvm::any_of(op->getOperands(),
                       [&](Value v) { return act.isShadowed(v); }))
        return unsupported(op, "forward");
      return success();
    }
    if (!hasDerivativeRule(op))
      return unsupported(op, "forward");
    if (hasZeroDerivative(op))
      return success();
    if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      tangent[op->getResult(0)] =
          castDerivative(b, clone, tangentOf(op->getOperand(0)),
                         /*toOperand=*/false);
      return success();
    }
    FailureOr<SmallVector<Value>> partials = emitPartials(b, clone);
    if (failed(partials))
      return unsupported(op, "forward");
    Value sum;
    for (auto [operand, partial] : llvm::zip(op->getOperands(), *partials)) {
      Value t = tangentOf(operand);
      if (!t || !partial)
        continue;
      sum = addDerivatives(b, loc, sum,
                           arith::MulFOp::create(b, loc, t, partial));
    }
    tangent[op->getResult(0)] =
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
                             ? shadow.lookup(v)
                             : tangentOrZero(v, loc));
    }
    auto ruleCall = func::CallOp::create(b, loc, rule, operands);
    unsigned next = 0;
    for (auto [r, activity] : llvm::zip(call.getResults(), rets)) {
      map.map(r, ruleCall.getResult(next++));
      if (hasShadow(activity))
        tangent[r] = ruleCall.getResult(next++);
    }
    return success();
  }

  /// Result/iter-arg positions of `values` that carry a tangent.
  SmallVector<unsigned> variedPositions(ValueRange values) {
    SmallVector<unsigned> positions;
    for (auto [i, v] : llvm::enumerate(values))
      if (act.isVaried(v))
        positions.push_back(i);
    return positions;
  }

  LogicalResult emitIf(scf::IfOp op) {
    Location loc = op.getLoc();
    SmallVector<unsigned> withTangent = variedPositions(op.getResults());
    SmallVector<Type> types(op.getResultTypes());
    for (unsigned i : withTangent)
      types.push_back(op.getResult(i).getType());
    auto newIf =
        scf::IfOp::create(b, loc, types, map.lookup(op.getCondition()),
                          /*withElseRegion=*/!op.getElseRegion().empty());
    for (auto [srcRegion, dstRegion] :
         {std::pair(&op.getThenRegion(), &newIf.getThenRegion()),
          std::pair(&op.getElseRegion(), &newIf.getElseRegion())}) {
      if (srcRegion->empty())
        continue;
      OpBuilder::InsertionGuard guard(b);
      Block &dst = dstRegion->front();
      clearTerminator(dst);
      b.setInsertionPointToEnd(&dst);
      Block &src = srcRegion->front();
      if (failed(emitBlock(src)))
        return failure();
      yieldWithTangents(src, withTangent, loc);
    }
    mapResultsWithTangents(op, newIf, withTangent);
    return success();
  }

  /// Yields the mapped primal operands of `src`'s scf.yield, then the
  /// tangents of those at `withTangent`.
  void yieldWithTangents(Block &src, ArrayRef<unsigned> withTangent,
                         Location loc) {
    auto yield = cast<scf::YieldOp>(src.getTerminator());
    SmallVector<Value> operands = mapAll(yield.getOperands());
    for (unsigned i : withTangent)
      operands.push_back(tangentOrZero(yield.getOperand(i), loc));
    scf::YieldOp::create(b, loc, operands);
  }

  /// Maps `src`'s results to `dst`'s leading results and the tangents of
  /// those at `withTangent` to the trailing ones.
  void mapResultsWithTangents(Operation *src, Operation *dst,
                              ArrayRef<unsigned> withTangent) {
    for (auto [i, r] : llvm::enumerate(src->getResults()))
      map.map(r, dst->getResult(i));
    for (auto [k, i] : llvm::enumerate(withTangent))
      tangent[src->getResult(i)] = dst->getResult(src->getNumResults() + k);
  }

  /// An scf.while carrying, after the primal values, the tangents of its
  /// varied before-arguments (inits, yields) and after-arguments (condition
  /// values, results).
  LogicalResult emitWhile(scf::WhileOp op) {
    Location loc = op.getLoc();
    SmallVector<unsigned> beforeTangents =
        variedPositions(op.getBeforeArguments());
    SmallVector<unsigned> afterTangents =
        variedPositions(op.getAfterArguments());
    SmallVector<Value> inits = mapAll(op.getInits());
    for (unsigned i : beforeTangents)
      inits.push_back(tangentOrZero(op.getInits()[i], loc));
    SmallVector<Type> resultTypes(op.getResultTypes());
    for (unsigned i : afterTangents)
      resultTypes.push_back(op.getResult(i).getType());
    auto loop = scf::WhileOp::create(b, loc, resultTypes, inits);
    auto emitRegion = [&](Block &src, Region &dst, ValueRange args,
                          ArrayRef<unsigned> argTangents,
                          ArrayRef<unsigned> passedTangents) -> LogicalResult {
      SmallVector<Type> types;
      SmallVector<Location> locs;
      for (Value v : args) {
        types.push_back(v.getType());
        locs.push_back(v.getLoc());
      }
      for (unsigned i : argTangents) {
        types.push_back(args[i].getType());
        locs.push_back(loc);
      }
      OpBuilder::InsertionGuard guard(b);
      Block *block = b.createBlock(&dst, {}, types, locs);
      for (auto [i, arg] : llvm::enumerate(args))
        map.map(arg, block->getArgument(i));
      for (auto [k, i] : llvm::enumerate(argTangents))
        tangent[args[i]] = block->getArgument(args.size() + k);
      if (failed(emitBlock(src)))
        return failure();
      Operation *terminator = src.getTerminator();
      ValueRange passed = isa<scf::ConditionOp>(terminator)
                              ? cast<scf::ConditionOp>(terminator).getArgs()
                              : terminator->getOperands();
      SmallVector<Value> operands = mapAll(passed);
      for (unsigned i : passedTangents)
        operands.push_back(tangentOrZero(passed[i], loc));
      if (auto condition = dyn_cast<scf::ConditionOp>(terminator))
        scf::ConditionOp::create(b, loc, map.lookup(condition.getCondition()),
                                 operands);
      else
        scf::YieldOp::create(b, loc, operands);
      return success();
    };
    if (failed(emitRegion(op.getBefore().front(), loop.getBefore(),
                          op.getBeforeArguments(), beforeTangents,
                          afterTangents)) ||
        failed(emitRegion(op.getAfter().front(), loop.getAfter(),
                          op.getAfterArguments(), afterTangents,
                          beforeTangents)))
      return failure();
    mapResultsWithTangents(op, loop, afterTangents);
    return success();
  }

  LogicalResult emitFor(scf::ForOp op) {
    Location loc = op.getLoc();
    SmallVector<unsigned> withTangent = variedPositions(op.getResults());
    SmallVector<Value> inits = mapAll(op.getInitArgs());
    for (unsigned i : withTangent)
      inits.push_back(tangentOrZero(op.getInitArgs()[i], loc));
    auto loop = scf::ForOp::create(b, loc, map.lookup(op.getLowerBound()),
                                   map.lookup(op.getUpperBound()),
                                   map.lookup(op.getStep()), inits);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *body = loop.getBody();
      clearTerminator(*body);
      b.setInsertionPointToEnd(body);
      map.map(op.getInductionVar(), loop.getInductionVar());
      for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
        map.map(arg, loop.getRegionIterArgs()[i]);
      for (auto [k, i] : llvm::enumerate(withTangent))
        tangent[op.getRegionIterArgs()[i]] =
            loop.getRegionIterArgs()[op.getNumRegionIterArgs() + k];
      if (failed(emitBlock(*op.getBody())))
        return failure();
      yieldWithTangents(*op.getBody(), withTangent, loc);
    }
    mapResultsWithTangents(op, loop, withTangent);
    return success();
  }

private:
  OpBuilder &b;
  const Activities &act;
  RuleFinder findRule;
  RecordShadows &records;
};

} // namespace

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
      emitter.shadow[arg] = shadowArgs[i];
    else
      emitter.tangent[arg] = shadowArgs[i];
  }
  if (failed(emitter.emitBlock(body)))
    return failure();
  SmallVector<Value> results;
  for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
    if (rets[j] != Activity::DupNoNeed)
      results.push_back(emitter.map.lookup(v));
    if (hasShadow(rets[j])) {
      if (isa<BaseMemRefType>(v.getType())) {
        Value sh = emitter.shadow.lookup(v);
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
