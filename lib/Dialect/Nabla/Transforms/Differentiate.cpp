//===- Differentiate.cpp - Expand derivative requests ---------------------===//
//
// The `nabla-differentiate` pass. For every distinct (callee, mode,
// activities) it generates one derivative function next to the callee and
// replaces each request by a call of it:
//
//  1. The callee is cloned and its calls inlined (nested device functions are
//     differentiated transitively).
//  2. Activity analysis marks the float values that depend on an active input
//     and the memrefs that have shadows.
//  3. Forward mode (JVPEmitter) clones each op and emits its tangent next to
//     it; regions get extra results/iter_args for tangents.
//  4. Reverse mode (VJPEmitter) emits a forward sweep, then a reverse sweep
//     of adjoints at the end of the function. Values the reverse sweep needs
//     from inside an scf.if are cached by yielding them from the forward
//     scf.if; the reverse of an scf.if is an scf.if on the same condition
//     that yields the adjoint contributions to values defined outside it.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/Transforms/Passes.h"

#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "KernelAdjoint.h"
#include "RecordShadows.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Dialect/Nabla/Transforms/DerivativeRuleModels.h"
#include "nabla/Transforms/InliningUtils.h"

#include "mlir/Conversion/ControlFlowToSCF/ControlFlowToSCF.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/InliningUtils.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/ScopeExit.h"

namespace nabla {
#define GEN_PASS_DEF_DIFFERENTIATE
#include "nabla/Dialect/Nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using namespace nabla;

namespace {

//===----------------------------------------------------------------------===//
// Preparation: clone the callee and inline its calls
//===----------------------------------------------------------------------===//

/// The function registered by a `nabla.custom_derivative` in `table` for
/// `callee` in `mode` with exactly these activities, or null.
func::FuncOp findCustomRule(Operation *table, StringRef callee,
                            DerivativeMode mode, ArrayRef<Activity> args,
                            ArrayRef<Activity> rets) {
  for (Block &block : table->getRegion(0))
    for (auto rule : block.getOps<CustomDerivativeOp>())
      if (rule.getCallee() == callee && rule.getDerivativeMode() == mode &&
          ArrayRef<Activity>(rule.getArgumentActivities()) == args &&
          ArrayRef<Activity>(rule.getResultActivities()) == rets)
        return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            rule, rule.getRuleAttr());
  return {};
}

/// True if some `nabla.custom_derivative` in `table` is for `callee`.
bool hasCustomRule(Operation *table, StringRef callee) {
  for (Block &block : table->getRegion(0))
    for (auto rule : block.getOps<CustomDerivativeOp>())
      if (rule.getCallee() == callee)
        return true;
  return false;
}

/// Inlines every func.call in `func` (resolved in `symbols`), transitively,
/// except calls of functions with custom derivatives, which differentiation
/// calls instead.
LogicalResult inlineCalls(func::FuncOp func, SymbolTable &symbols) {
  InlineEverything inliner(func.getContext());
  for (unsigned round = 0;; ++round) {
    func::CallOp call;
    func.walk([&](func::CallOp op) {
      if (hasCustomRule(symbols.getOp(), op.getCallee()))
        return WalkResult::advance();
      call = op;
      return WalkResult::interrupt();
    });
    if (!call)
      return success();
    if (round > 1000)
      return call.emitOpError("recursive call to @")
             << call.getCallee() << " cannot be differentiated";
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal())
      return call.emitOpError("calls @")
             << call.getCallee()
             << ", which has no body to differentiate (give it a custom "
                "derivative or mark the call's operands const)";
    if (failed(inlineCall(inliner, cloneInlinedBody, call, callee,
                          &callee.getBody())))
      return call.emitOpError("cannot be inlined for differentiation");
    call.erase();
  }
}

//===----------------------------------------------------------------------===//
// Activity analysis
//===----------------------------------------------------------------------===//

bool isFloatLike(Type type) { return isDifferentiableScalarType(type); }

/// The memref.alloca `memref` is (through views), or null.
memref::AllocaOp getAllocation(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto alloca = dyn_cast<memref::AllocaOp>(def))
      return alloca;
    if (!isa<ViewLikeOpInterface>(def) || def->getNumOperands() == 0)
      return {};
    memref = def->getOperand(0);
  }
  return {};
}

/// Creates, at `b`, a zero-filled allocation like `alloca` (dynamic sizes
/// `sizes`): the shadow of a private buffer.
Value createZeroedAllocation(OpBuilder &b, memref::AllocaOp alloca,
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

/// Float values that depend on an active input, and memrefs with shadows.
struct Activities {
  DenseSet<Value> varied;
  DenseSet<Value> shadowed;

  bool isVaried(Value v) const { return varied.contains(v); }
  bool isShadowed(Value v) const { return shadowed.contains(v); }

  /// Propagates from the seeds to a fixpoint over `func`.
  void propagate(func::FuncOp func) {
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
          for (auto [init, arg] :
               llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs()))
            if (isVaried(init))
              mark(varied, arg);
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
        if (op->getNumRegions())
          return;
        bool anyVaried = llvm::any_of(op->getOperands(), [&](Value v) {
          return isVaried(v) || (isa<func::CallOp>(op) && isShadowed(v));
        });
        if (anyVaried && !hasZeroDerivative(op))
          for (Value r : op->getResults())
            if (isFloatLike(r.getType()))
              mark(varied, r);
      });
    }
  }
};

/// Short code of an activity list: c d n a x.
std::string activityCode(ArrayRef<Activity> activities) {
  std::string code;
  for (Activity a : activities) {
    switch (a) {
    case Activity::Const:
      code += 'c';
      break;
    case Activity::Dup:
      code += 'd';
      break;
    case Activity::DupNoNeed:
      code += 'n';
      break;
    case Activity::Active:
      code += 'a';
      break;
    case Activity::ActiveNoNeed:
      code += 'x';
      break;
    }
  }
  return code;
}

/// Reports an op on an active path that has no derivative rule.
LogicalResult unsupported(Operation *op, StringRef mode) {
  return op->emitOpError("has no ")
         << mode
         << "-mode derivative rule and is on an active path (it depends on or "
            "writes differentiated data)";
}

/// True if `op` touches differentiated data: a varied operand or result, or
/// a memref operand with a shadow.
bool touchesActiveData(Operation *op, const Activities &act) {
  for (Value v : op->getOperands())
    if (act.isVaried(v) || act.isShadowed(v))
      return true;
  for (Value v : op->getResults())
    if (act.isVaried(v))
      return true;
  return false;
}

/// Finds the custom rule a call on an active path needs.
using RuleFinder = std::function<func::FuncOp(
    StringRef, DerivativeMode, ArrayRef<Activity>, ArrayRef<Activity>)>;

/// The activities of `call`'s arguments and results in `mode`, from the
/// activity analysis: shadowed memrefs are dup; varied floats are active
/// (reverse) or dup (forward); everything else const.
std::pair<SmallVector<Activity>, SmallVector<Activity>>
callActivities(func::CallOp call, DerivativeMode mode, const Activities &act) {
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
LogicalResult missingRule(func::CallOp call, DerivativeMode mode,
                          ArrayRef<Activity> args, ArrayRef<Activity> rets) {
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
LogicalResult checkUnshadowedWrite(Operation *op, Value value,
                                   const Activities &act) {
  if (!act.isVaried(value))
    return success();
  if (isa<memref::AtomicRMWOp>(op))
    return op->emitOpError("accumulates a differentiated value into a buffer "
                           "without a shadow");
  return op->emitOpError("stores a differentiated value into a buffer "
                         "without a shadow; mark the buffer dup");
}

/// Drops the terminator an op builder may have put into a new region block,
/// so the emitters can fill the block and add their own.
void clearTerminator(Block &block) {
  if (!block.empty() && block.mightHaveTerminator())
    block.getTerminator()->erase();
}

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
    if (op->getNumRegions() && touchesActiveData(op, act))
      return unsupported(op, "forward");
    if (auto call = dyn_cast<func::CallOp>(op);
        call && touchesActiveData(op, act))
      return emitCall(call);

    Operation *clone = b.clone(*op, map);
    if (isGPUCollective(op)) {
      if (!act.isVaried(op->getResult(0)))
        return success();
      FailureOr<Value> t = emitCollectiveTangent(
          b, op, clone->getOperands(), tangentOrZero(op->getOperand(0), loc));
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
      if (atomic.getKind() != arith::AtomicRMWKind::addf)
        return unsupported(op, "forward");
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf,
                                  tangentOrZero(atomic.getValue(), loc), sh,
                                  mapAll(atomic.getIndices()));
      return success();
    }
    if (isa<ViewLikeOpInterface>(op) && op->getNumOperands() &&
        act.isShadowed(op->getOperand(0))) {
      IRMapping shadowMap = map;
      shadowMap.map(map.lookup(op->getOperand(0)),
                    shadow.lookup(op->getOperand(0)));
      Operation *view = b.clone(*op, shadowMap);
      shadow[op->getResult(0)] = view->getResult(0);
      return success();
    }

    bool variedResult = llvm::any_of(op->getResults(),
                                     [&](Value r) { return act.isVaried(r); });
    if (!variedResult) {
      if (llvm::any_of(op->getOperands(),
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
    if (op->getNumRegions() && regionTouchesActive(op))
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
      if (!branchScopes.empty())
        return op->emitOpError("views of differentiated buffers inside "
                               "scf.if are not supported yet in reverse mode");
      IRMapping shadowMap = fwd;
      shadowMap.map(fwd.lookup(op->getOperand(0)),
                    shadow.lookup(op->getOperand(0)));
      shadow[op->getResult(0)] = b.clone(*op, shadowMap)->getResult(0);
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
    SmallVector<std::pair<Value, Value>> tapes; // src value → tape memref
    /// Body ops the reverse loop repeats instead of taping their results
    /// (pure ops, loads of buffers the function never writes), in order.
    SmallVector<Operation *> recomputed;
  };

  /// Bases (through views) of the buffers the differentiated function may
  /// write; loads of the others are repeatable in the reverse sweep.
  DenseSet<Value> writtenBuffers;

  static Value getBuffer(Value memref) {
    while (Operation *def = memref.getDefiningOp()) {
      if (!isa<ViewLikeOpInterface>(def) || def->getNumOperands() == 0)
        break;
      memref = def->getOperand(0);
    }
    return memref;
  }

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
            writtenBuffers.insert(getBuffer(v));
          else
            unknown = true;
        }
      if (unknown)
        for (Value v : op->getOperands())
          if (isa<BaseMemRefType>(v.getType()))
            writtenBuffers.insert(getBuffer(v));
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
        auto arg = dyn_cast<BlockArgument>(getBuffer(v));
        if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
          return false;
      }
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return !writtenBuffers.contains(getBuffer(load.getMemRef()));
    return isMemoryEffectFree(op);
  }
  DenseMap<Operation *, LoopTape> loopTapes;
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
      if (inner->getNumRegions() && !isa<scf::IfOp>(inner) &&
          regionTouchesActive(inner)) {
        unsupportedRegion = inner;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unsupportedRegion)
      return unsupportedRegion->emitOpError(
          "is a region op on an active path inside a loop, which reverse mode "
          "does not support yet (scf.if is supported)");
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
      if (isa<scf::IfOp>(inner))
        inner.walk([&](Operation *nested) {
          if (nested != &inner)
            tapeResults(nested);
        });
    }
    for (Value v : taped) {
      // index has no storage size on every target: tape it as i64.
      Type element = v.getType().isIndex() ? b.getI64Type() : v.getType();
      auto type = staticCount
                      ? MemRefType::get({*staticCount}, element)
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
    // Body values are taped, not cached by enclosing regions.
    branchScopes.emplace_back();
    LogicalResult bodyResult = forwardBlock(*op.getBody());
    branchScopes.pop_back();
    if (failed(bodyResult))
      return failure();
    Value iteration = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, loop.getInductionVar(), lb),
        step);
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

  //--- Reverse sweep -------------------------------------------------------//

  LogicalResult reverseBlock(Block &src, AdjointScope &scope) {
    for (Operation &op : llvm::reverse(src.without_terminator()))
      if (failed(reverseOp(&op, scope)))
        return failure();
    return success();
  }

  /// Accumulates `value` into `shadowMemref[indices]`: a plain
  /// load-add-store when the access is thread-exclusive (a private shadow,
  /// or the thread's global id into an argument), an atomic add otherwise.
  void accumulate(Operation *src, Value shadowMemref, ValueRange indices,
                  Value value) {
    Location loc = src->getLoc();
    // Private shadows (of allocations) belong to the thread.
    // Threads of a (1-D) block have distinct thread ids, and of a (1-D) grid
    // distinct global ids.
    Operation *index =
        indices.size() == 1 ? indices.front().getDefiningOp() : nullptr;
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        cast<MemRefType>(shadowMemref.getType()).getMemorySpace());
    bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
    auto globalX = dyn_cast_or_null<gpu::GlobalIdOp>(index);
    auto threadX = dyn_cast_or_null<gpu::ThreadIdOp>(index);
    bool exclusive = getAllocation(shadowMemref) ||
                     (globalX && globalX.getDimension() == gpu::Dimension::x &&
                      isa<BlockArgument>(shadowMemref) && !workgroup) ||
                     (threadX && threadX.getDimension() == gpu::Dimension::x &&
                      workgroup && isa<BlockArgument>(shadowMemref));
    if (exclusive) {
      Value old = memref::LoadOp::create(b, loc, shadowMemref, indices);
      memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, value),
                              shadowMemref, indices);
      return;
    }
    if (remarks)
      src->emitRemark("adjoint accumulation keeps an atomic: the index is "
                      "not proven to be an injective function of the global "
                      "thread id");
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value,
                                shadowMemref, indices);
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
    if (auto call = dyn_cast<func::CallOp>(op);
        call && touchesActiveData(op, act))
      return reverseCall(call, scope);
    // The reverse sweep replays each barrier at the mirrored point: adjoints
    // written to workgroup shadows before it are read by other threads after.
    if (isa<gpu::BarrierOp>(op)) {
      gpu::BarrierOp::create(b, loc);
      return success();
    }
    if (isGPUCollective(op)) {
      Value d = scope.get(op->getResult(0));
      if (!d || !act.isVaried(op->getOperand(0)))
        return success();
      FailureOr<Value> contribution =
          emitCollectiveAdjoint(b, op, mapped(op->getOperands()), d);
      if (failed(contribution))
        return failure();
      scope.add(b, loc, op->getOperand(0), *contribution);
      return success();
    }
    if (op->getNumRegions() && !regionTouchesActive(op))
      return success();
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value sh = shadow.lookup(store.getMemRef());
      if (!sh)
        return checkUnshadowedWrite(op, store.getValue(), act);
      if (!isFloatLike(store.getValue().getType()))
        return success();
      SmallVector<Value> indices = mapped(store.getIndices());
      Value d = memref::LoadOp::create(b, loc, sh, indices);
      memref::StoreOp::create(
          b, loc, createZero(b, loc, store.getValue().getType()), sh, indices);
      if (act.isVaried(store.getValue()))
        scope.add(b, loc, store.getValue(), d);
      return success();
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      Value sh = shadow.lookup(load.getMemRef());
      if (Value d = scope.get(load.getResult()); d && sh)
        accumulate(op, sh, mapped(load.getIndices()), d);
      return success();
    }
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
      Value sh = shadow.lookup(atomic.getMemref());
      if (!sh)
        return checkUnshadowedWrite(op, atomic.getValue(), act);
      if (atomic.getKind() != arith::AtomicRMWKind::addf ||
          scope.get(atomic.getResult()))
        return unsupported(op, "reverse");
      if (act.isVaried(atomic.getValue()))
        scope.add(
            b, loc, atomic.getValue(),
            memref::LoadOp::create(b, loc, sh, mapped(atomic.getIndices())));
      return success();
    }
    bool variedResult = llvm::any_of(op->getResults(),
                                     [&](Value r) { return act.isVaried(r); });
    if (!variedResult) {
      if (!isa<ViewLikeOpInterface>(op) &&
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
      if (failed(reverseBlock(*op.getBody(), scope)))
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
        operands.push_back(shadow.lookup(v));
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

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct Differentiate : public nabla::impl::DifferentiateBase<Differentiate> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerDerivativeRuleModels(registry);
  }

  void runOnOperation() override {
    // Requests created while generating (none today, since calls are
    // inlined) would be picked up by the next round.
    // Kernel adjoints first: each becomes a kernel holding a request.
    SmallVector<KernelAdjointOp> kernelRequests;
    getOperation().walk(
        [&](KernelAdjointOp op) { kernelRequests.push_back(op); });
    for (KernelAdjointOp request : kernelRequests)
      if (failed(expandKernelAdjoint(request)))
        return signalPassFailure();
    SmallVector<Operation *> requests;
    getOperation().walk([&](Operation *op) {
      if (isa<AutodiffOp, FwddiffOp>(op))
        requests.push_back(op);
    });
    for (Operation *request : requests)
      if (failed(expand(request)))
        return signalPassFailure();
  }

  template <typename OpTy> static ValueRange inputsOf(Operation *op) {
    return cast<OpTy>(op).getInputs();
  }

  LogicalResult expand(Operation *request) {
    SymbolTableCollection tables;
    FunctionOpInterface calleeInterface;
    DerivativeMode mode;
    SmallVector<Activity> args, rets;
    if (auto ad = dyn_cast<AutodiffOp>(request)) {
      calleeInterface = ad.resolveCallee(tables);
      mode = DerivativeMode::Reverse;
      args = ad.getArgumentActivities();
      rets = ad.getResultActivities();
    } else {
      auto fd = cast<FwddiffOp>(request);
      calleeInterface = fd.resolveCallee(tables);
      mode = DerivativeMode::Forward;
      args = fd.getArgumentActivities();
      rets = fd.getResultActivities();
    }
    if (!calleeInterface)
      return request->emitOpError("callee does not resolve");
    // A registered custom derivative wins, also for body-less callees.
    Operation *tableOp =
        SymbolTable::getNearestSymbolTable(calleeInterface.getOperation());
    func::FuncOp derivative =
        findCustomRule(tableOp, calleeInterface.getName(), mode, args, rets);
    if (!derivative) {
      auto callee = dyn_cast<func::FuncOp>(calleeInterface.getOperation());
      if (!callee || callee.isExternal())
        return request->emitOpError("can only differentiate a func.func with "
                                    "a body or a custom derivative; @")
               << calleeInterface.getName() << " has neither";
      std::string name =
          (mode == DerivativeMode::Reverse ? "__nabla_vjp_" : "__nabla_jvp_") +
          callee.getName().str() + "_" + activityCode(args);
      if (!rets.empty())
        name += "_" + activityCode(rets);
      SymbolTable symbols(tableOp);
      derivative = symbols.lookup<func::FuncOp>(name);
      if (!derivative) {
        FailureOr<func::FuncOp> generated =
            generate(callee, symbols, name, mode, args, rets, request);
        if (failed(generated))
          return failure();
        derivative = *generated;
      }
    }
    OpBuilder builder(request);
    auto call = func::CallOp::create(builder, request->getLoc(), derivative,
                                     request->getOperands());
    request->replaceAllUsesWith(call.getResults());
    request->erase();
    return success();
  }

  FailureOr<func::FuncOp> generate(func::FuncOp callee, SymbolTable &symbols,
                                   StringRef name, DerivativeMode mode,
                                   ArrayRef<Activity> args,
                                   ArrayRef<Activity> rets,
                                   Operation *request) {
    DerivativeSignature signature = DerivativeSignature::expand(
        mode, callee.getArgumentTypes(), callee.getResultTypes(), args, rets);

    // A private, call-inlined working copy of the callee.
    OpBuilder builder(callee);
    auto work = cast<func::FuncOp>(builder.clone(*callee));
    work.setName((name + "_primal").str());
    symbols.insert(work);
    llvm::scope_exit eraseWork([&] { work.erase(); });
    if (failed(inlineCalls(work, symbols)))
      return failure();
    // scf.execute_region is only a scope: inline its body (a multi-block body
    // becomes unstructured control flow, lifted below).
    if (work->walk([](scf::ExecuteRegionOp) { return WalkResult::interrupt(); })
            .wasInterrupted()) {
      RewritePatternSet patterns(&getContext());
      scf::ExecuteRegionOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
      walkAndApplyPatterns(work, std::move(patterns));
    }
    // Unstructured control flow (cf.br, cf.cond_br, cf.switch, also from
    // inlined multi-block callees) is lifted to scf first.
    if (!work.getBody().hasOneBlock()) {
      OpPassManager lift(func::FuncOp::getOperationName());
      lift.addPass(createLiftControlFlowToSCFPass());
      if (failed(runPipeline(lift, work)) || !work.getBody().hasOneBlock())
        return request->emitOpError("cannot differentiate @")
               << callee.getName()
               << ": its control flow could not be made structured";
    }

    auto funcType = FunctionType::get(
        &getContext(), signature.getOperandTypes(), signature.getResultTypes());
    builder.setInsertionPointAfter(callee);
    auto derivative =
        func::FuncOp::create(builder, callee.getLoc(), name, funcType);
    derivative.setPrivate();
    symbols.insert(derivative);
    Block *entry = derivative.addEntryBlock();
    builder.setInsertionPointToStart(entry);

    // Map the callee's arguments to primal/shadow arguments.
    Block &body = work.getBody().front();
    Activities act;
    SmallVector<Value> primalArgs(body.getNumArguments()),
        shadowArgs(body.getNumArguments());
    unsigned next = 0;
    for (auto [i, activity] : llvm::enumerate(args)) {
      primalArgs[i] = entry->getArgument(next++);
      if (hasShadow(activity))
        shadowArgs[i] = entry->getArgument(next++);
      Value arg = body.getArgument(i);
      if (activity == Activity::Const)
        continue;
      if (isa<BaseMemRefType>(arg.getType()))
        act.shadowed.insert(arg);
      else if (isFloatLike(arg.getType()))
        act.varied.insert(arg);
    }
    act.propagate(work);
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Operation *tableOp = symbols.getOp();
    RuleFinder findRule = [tableOp](StringRef name, DerivativeMode ruleMode,
                                    ArrayRef<Activity> ruleArgs,
                                    ArrayRef<Activity> ruleRets) {
      return findCustomRule(tableOp, name, ruleMode, ruleArgs, ruleRets);
    };

    RecordShadows records(symbols);
    LogicalResult result =
        mode == DerivativeMode::Forward
            ? emitForward(builder, body, ret, act, args, rets, primalArgs,
                          shadowArgs, findRule, records)
            : emitReverse(builder, body, ret, act, args, rets, primalArgs,
                          shadowArgs, entry->getArguments().drop_front(next),
                          findRule, records);
    if (failed(result)) {
      derivative.erase();
      return failure();
    }
    return derivative;
  }

  LogicalResult emitForward(OpBuilder &builder, Block &body, func::ReturnOp ret,
                            const Activities &act, ArrayRef<Activity> args,
                            ArrayRef<Activity> rets, ArrayRef<Value> primalArgs,
                            ArrayRef<Value> shadowArgs, RuleFinder findRule,
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

  LogicalResult emitReverse(OpBuilder &builder, Block &body, func::ReturnOp ret,
                            const Activities &act, ArrayRef<Activity> args,
                            ArrayRef<Activity> rets, ArrayRef<Value> primalArgs,
                            ArrayRef<Value> shadowArgs, ValueRange seeds,
                            RuleFinder findRule, RecordShadows &records) {
    VJPEmitter emitter(builder, act, remarks, std::move(findRule), records);
    emitter.entry = builder.getInsertionBlock();
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
};

} // namespace
