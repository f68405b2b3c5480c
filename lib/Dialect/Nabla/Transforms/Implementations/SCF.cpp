//===- SCF.cpp - Derivatives of scf.if, scf.for and scf.while -------------===//
//
// Forward mode, on the public emitter API: each region op is rebuilt with
// extra results (and iteration values, and region arguments) carrying the
// tangents of its varied values, after the primal ones.
//
// Reverse mode: scf.if caches what its branches define in the forward sweep
// and runs the reversed branches under the same condition; loops are reversed
// by the loop strategies (tapes, binomial checkpointing, Jacobian
// preaccumulation: LoopReversal.cpp and its siblings), which the hooks reach.
// Region ops that touch no differentiated data are only cloned.
//
//===----------------------------------------------------------------------===//

#include "EmitterHooks.h"

#include "../ActivityAnalysis.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace nabla;

namespace {

/// Positions of `values` that carry a tangent.
SmallVector<unsigned> variedPositions(ForwardEmitter &emitter,
                                      ValueRange values) {
  SmallVector<unsigned> positions;
  for (auto [i, v] : llvm::enumerate(values))
    if (emitter.isVaried(v))
      positions.push_back(i);
  return positions;
}

/// Yields the primals of `src`'s scf.yield operands, then the tangents of
/// those at `withTangent`.
void yieldWithTangents(ForwardEmitter &emitter, Block &src,
                       ArrayRef<unsigned> withTangent, Location loc) {
  auto yield = cast<scf::YieldOp>(src.getTerminator());
  SmallVector<Value> operands = emitter.primals(yield.getOperands());
  for (unsigned i : withTangent)
    operands.push_back(emitter.tangentOrZero(yield.getOperand(i), loc));
  scf::YieldOp::create(emitter.builder(), loc, operands);
}

/// Maps `src`'s results to `dst`'s leading results and the tangents of
/// those at `withTangent` to the trailing ones.
void mapResultsWithTangents(ForwardEmitter &emitter, Operation *src,
                            Operation *dst, ArrayRef<unsigned> withTangent) {
  for (auto [i, r] : llvm::enumerate(src->getResults()))
    emitter.setPrimal(r, dst->getResult(i));
  for (auto [k, i] : llvm::enumerate(withTangent))
    emitter.setTangent(src->getResult(i),
                       dst->getResult(src->getNumResults() + k));
}

struct IfForward
    : public ForwardModeOpInterface::ExternalModel<IfForward, scf::IfOp> {
  LogicalResult emitForwardMode(Operation *operation,
                                ForwardEmitter &emitter) const {
    auto op = cast<scf::IfOp>(operation);
    OpBuilder &b = emitter.builder();
    Location loc = op.getLoc();
    SmallVector<unsigned> withTangent =
        variedPositions(emitter, op.getResults());
    SmallVector<Type> types(op.getResultTypes());
    for (unsigned i : withTangent)
      types.push_back(op.getResult(i).getType());
    auto newIf =
        scf::IfOp::create(b, loc, types, emitter.primal(op.getCondition()),
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
      if (failed(emitter.emitBlock(src)))
        return failure();
      yieldWithTangents(emitter, src, withTangent, loc);
    }
    mapResultsWithTangents(emitter, op, newIf, withTangent);
    return success();
  }
};

struct IfReverse
    : public ReverseModeOpInterface::ExternalModel<IfReverse, scf::IfOp> {
  LogicalResult emitForwardSweep(Operation *op, ReverseEmitter &emitter) const {
    return hooks::forwardSweepIf(emitter, cast<scf::IfOp>(op));
  }
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    if (!emitter.isActive(op))
      return success();
    return hooks::reverseSweepIf(emitter, cast<scf::IfOp>(op));
  }
};

struct ForForward
    : public ForwardModeOpInterface::ExternalModel<ForForward, scf::ForOp> {
  LogicalResult emitForwardMode(Operation *operation,
                                ForwardEmitter &emitter) const {
    auto op = cast<scf::ForOp>(operation);
    OpBuilder &b = emitter.builder();
    Location loc = op.getLoc();
    SmallVector<unsigned> withTangent =
        variedPositions(emitter, op.getResults());
    SmallVector<Value> inits = emitter.primals(op.getInitArgs());
    for (unsigned i : withTangent)
      inits.push_back(emitter.tangentOrZero(op.getInitArgs()[i], loc));
    auto loop = scf::ForOp::create(b, loc, emitter.primal(op.getLowerBound()),
                                   emitter.primal(op.getUpperBound()),
                                   emitter.primal(op.getStep()), inits);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *body = loop.getBody();
      clearTerminator(*body);
      b.setInsertionPointToEnd(body);
      emitter.setPrimal(op.getInductionVar(), loop.getInductionVar());
      for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
        emitter.setPrimal(arg, loop.getRegionIterArgs()[i]);
      for (auto [k, i] : llvm::enumerate(withTangent))
        emitter.setTangent(
            op.getRegionIterArgs()[i],
            loop.getRegionIterArgs()[op.getNumRegionIterArgs() + k]);
      if (failed(emitter.emitBlock(*op.getBody())))
        return failure();
      yieldWithTangents(emitter, *op.getBody(), withTangent, loc);
    }
    mapResultsWithTangents(emitter, op, loop, withTangent);
    return success();
  }
};

struct ForReverse
    : public ReverseModeOpInterface::ExternalModel<ForReverse, scf::ForOp> {
  LogicalResult emitForwardSweep(Operation *op, ReverseEmitter &emitter) const {
    if (!emitter.isActive(op)) {
      emitter.clonePrimal(op);
      return success();
    }
    return hooks::forwardSweepFor(emitter, cast<scf::ForOp>(op));
  }
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    return hooks::reverseSweepFor(emitter, cast<scf::ForOp>(op));
  }
};

/// An scf.while carrying, after the primal values, the tangents of its
/// varied before-arguments (inits, yields) and after-arguments (condition
/// values, results).
struct WhileForward
    : public ForwardModeOpInterface::ExternalModel<WhileForward, scf::WhileOp> {
  LogicalResult emitForwardMode(Operation *operation,
                                ForwardEmitter &emitter) const {
    auto op = cast<scf::WhileOp>(operation);
    OpBuilder &b = emitter.builder();
    Location loc = op.getLoc();
    SmallVector<unsigned> beforeTangents =
        variedPositions(emitter, op.getBeforeArguments());
    SmallVector<unsigned> afterTangents =
        variedPositions(emitter, op.getAfterArguments());
    SmallVector<Value> inits = emitter.primals(op.getInits());
    for (unsigned i : beforeTangents)
      inits.push_back(emitter.tangentOrZero(op.getInits()[i], loc));
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
        emitter.setPrimal(arg, block->getArgument(i));
      for (auto [k, i] : llvm::enumerate(argTangents))
        emitter.setTangent(args[i], block->getArgument(args.size() + k));
      if (failed(emitter.emitBlock(src)))
        return failure();
      Operation *terminator = src.getTerminator();
      auto condition = dyn_cast<scf::ConditionOp>(terminator);
      ValueRange passed =
          condition ? condition.getArgs() : terminator->getOperands();
      SmallVector<Value> operands = emitter.primals(passed);
      for (unsigned i : passedTangents)
        operands.push_back(emitter.tangentOrZero(passed[i], loc));
      if (condition)
        scf::ConditionOp::create(
            b, loc, emitter.primal(condition.getCondition()), operands);
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
    mapResultsWithTangents(emitter, op, loop, afterTangents);
    return success();
  }
};

struct WhileReverse
    : public ReverseModeOpInterface::ExternalModel<WhileReverse, scf::WhileOp> {
  LogicalResult emitForwardSweep(Operation *op, ReverseEmitter &emitter) const {
    if (!emitter.isActive(op)) {
      emitter.clonePrimal(op);
      return success();
    }
    return hooks::forwardSweepWhile(emitter, cast<scf::WhileOp>(op));
  }
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    return hooks::reverseSweepWhile(emitter, cast<scf::WhileOp>(op));
  }
};

} // namespace

void nabla::registerSCFDerivativeModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, scf::SCFDialect *) {
    scf::IfOp::attachInterface<IfForward, IfReverse>(*context);
    scf::ForOp::attachInterface<ForForward, ForReverse>(*context);
    scf::WhileOp::attachInterface<WhileForward, WhileReverse>(*context);
  });
}
