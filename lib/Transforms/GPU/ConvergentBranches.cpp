//===- ConvergentBranches.cpp - Every thread at ops that need all ---------===//
//
// See ConvergentBranches.h.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/ConvergentBranches.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

bool nabla::isBlockUniform(Value value) {
  // Every value `value` is computed from, through pure ops.
  SmallVector<Value> worklist = {value};
  llvm::DenseSet<Value> seen = {value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (!isa<gpu::GPUFuncOp>(owner) || !arg.getOwner()->isEntryBlock())
        return false;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (matchPattern(v, m_Constant()) ||
        isa<gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp>(def))
      continue;
    // Thread ids, lane ids and whatever reads memory differ.
    if (def->getNumOperands() == 0 || def->getNumRegions() != 0 ||
        !isMemoryEffectFree(def))
      return false;
    for (Value operand : def->getOperands())
      if (seen.insert(operand).second)
        worklist.push_back(operand);
  }
  return true;
}

namespace {

class Converger {
public:
  Converger(Operation *root, const nabla::ConvergenceOptions &options)
      : root(root), options(options), builder(root) {}

  LogicalResult run();

private:
  /// True if `op` is, or holds, an op every lane must run.
  bool holdsWarpOp(Operation *op);

  /// Runs the ops of `ifOp` in every lane, `outer` (null: true) and its
  /// condition (or its negation) guarding their effects.
  LogicalResult flatten(scf::IfOp ifOp, Value outer);

  /// Guards the effects of the ops of `block` by `predicate`, in place.
  LogicalResult predicate(Block &block, Value predicate);

  /// True if predicate() would convert `block` without an error.
  bool isConvertible(Block &block);

  /// What predicate() does with an op of the converted region.
  enum class Treatment {
    ActiveLanes,   // becomes the ballot of the predicate
    Keep,          // runs in every thread as it is
    Branch,        // holds such ops: converted under the conjunction
    Loop,          // holds such ops, block-uniform bounds: its body converted
    DivergentLoop, // holds such ops, bounds may differ: refused
    Refused,       // holds such ops otherwise (a while, a call): refused
    Guard,         // effects or may trap: runs under the predicate
  };
  Treatment classify(Operation *op);

  /// Wraps `op` in `scf.if %predicate` yielding zeros otherwise.
  LogicalResult guard(Operation *op, Value predicate);

  Value conjunction(Location loc, Value outer, Value condition);

  Operation *root;
  const nabla::ConvergenceOptions &options;
  OpBuilder builder;
  /// Functions that hold (directly or through calls) an op every lane must
  /// run.
  llvm::DenseSet<Operation *> warpFunctions;
};

} // namespace

bool Converger::holdsWarpOp(Operation *op) {
  WalkResult walk = op->walk([&](Operation *nested) {
    if (options.mustReach(nested))
      return WalkResult::interrupt();
    if (auto call = dyn_cast<func::CallOp>(nested)) {
      Operation *callee =
          SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr());
      if (callee && warpFunctions.contains(callee))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

Value Converger::conjunction(Location loc, Value outer, Value condition) {
  return outer ? arith::AndIOp::create(builder, loc, outer, condition)
               : condition;
}

LogicalResult Converger::guard(Operation *op, Value predicate) {
  builder.setInsertionPoint(op);
  Location loc = op->getLoc();
  SmallVector<Value> zeros;
  for (Type type : op->getResultTypes()) {
    TypedAttr zero = builder.getZeroAttr(type);
    if (!zero)
      return op->emitError()
             << "cannot run this op under a predicate so that every "
             << options.who << " reaches the " << options.what
             << " after it (its result has no zero to take otherwise)";
    zeros.push_back(arith::ConstantOp::create(builder, loc, zero));
  }
  auto ifOp = scf::IfOp::create(builder, loc, op->getResultTypes(), predicate,
                                /*withElseRegion=*/!zeros.empty());
  Block &thenBlock = ifOp.getThenRegion().front();
  OpBuilder atEnd = OpBuilder::atBlockEnd(&thenBlock);
  if (thenBlock.empty() || !thenBlock.back().hasTrait<OpTrait::IsTerminator>())
    scf::YieldOp::create(atEnd, loc, op->getResults());
  op->moveBefore(thenBlock.getTerminator());
  if (!zeros.empty()) {
    Block &elseBlock = ifOp.getElseRegion().front();
    atEnd.setInsertionPointToEnd(&elseBlock);
    if (elseBlock.empty() ||
        !elseBlock.back().hasTrait<OpTrait::IsTerminator>())
      scf::YieldOp::create(atEnd, loc, zeros);
  }
  Operation *yield = thenBlock.getTerminator();
  for (auto [result, replacement] :
       llvm::zip(op->getResults(), ifOp.getResults()))
    result.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return use.getOwner() != yield;
    });
  return success();
}

Converger::Treatment Converger::classify(Operation *op) {
  if (options.activeLanes && options.activeLanes(op))
    return Treatment::ActiveLanes;
  // Warp operations and barriers: every thread (a barrier in a branch some
  // threads skip was undefined behaviour already).
  if (options.mustReach(op) ||
      isa<gpu::ShuffleOp, nabla::SubgroupBarrierOp, gpu::BarrierOp>(op))
    return Treatment::Keep;
  if (holdsWarpOp(op)) {
    if (isa<scf::IfOp>(op))
      return Treatment::Branch;
    auto forOp = dyn_cast<scf::ForOp>(op);
    if (!forOp)
      return Treatment::Refused;
    return nabla::isBlockUniform(forOp.getLowerBound()) &&
                   nabla::isBlockUniform(forOp.getUpperBound()) &&
                   nabla::isBlockUniform(forOp.getStep())
               ? Treatment::Loop
               : Treatment::DivergentLoop;
  }
  bool speculatable = op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
                      isSpeculatable(op);
  if (speculatable || isa<memref::AllocaOp>(op))
    return Treatment::Keep;
  return Treatment::Guard;
}

bool Converger::isConvertible(Block &block) {
  for (Operation &op : block.without_terminator()) {
    switch (classify(&op)) {
    case Treatment::ActiveLanes:
    case Treatment::Keep:
      break;
    case Treatment::Branch: {
      auto ifOp = cast<scf::IfOp>(op);
      if (!isConvertible(ifOp.getThenRegion().front()) ||
          (!ifOp.getElseRegion().empty() &&
           !isConvertible(ifOp.getElseRegion().front())))
        return false;
      break;
    }
    case Treatment::Loop:
      if (!isConvertible(*cast<scf::ForOp>(op).getBody()))
        return false;
      break;
    case Treatment::DivergentLoop:
    case Treatment::Refused:
      return false;
    case Treatment::Guard:
      for (Type type : op.getResultTypes())
        if (!builder.getZeroAttr(type))
          return false;
      break;
    }
  }
  return true;
}

LogicalResult Converger::predicate(Block &block, Value predicate) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    switch (classify(op)) {
    case Treatment::ActiveLanes: {
      builder.setInsertionPoint(op);
      Value lanes = options.ballot(builder, op->getLoc(), predicate);
      op->getResult(0).replaceAllUsesWith(lanes);
      op->erase();
      break;
    }
    case Treatment::Keep:
      break;
    case Treatment::Branch:
      if (failed(flatten(cast<scf::IfOp>(op), predicate)))
        return failure();
      break;
    case Treatment::Loop:
      if (failed(this->predicate(*cast<scf::ForOp>(op).getBody(), predicate)))
        return failure();
      break;
    case Treatment::DivergentLoop:
      return op->emitError()
             << "cannot make every " << options.who << " reach "
             << options.what
             << " in this loop: the loop is in a branch that only some "
                "threads take, and its bounds may differ between threads";
    case Treatment::Refused: {
      Operation *warpOp = op;
      op->walk([&](Operation *nested) {
        if (options.mustReach(nested) && warpOp == op)
          warpOp = nested;
      });
      InFlightDiagnostic diag =
          warpOp->emitError()
          << "cannot make every " << options.who << " reach this "
          << options.what << ": it is inside a '" << op->getName()
          << "' in a branch that only some threads take, and a "
             "data-dependent loop or a call cannot be run in every thread "
             "under a predicate";
      if (warpOp != op)
        diag.attachNote(op->getLoc()) << "the '" << op->getName() << "'";
      return diag;
    }
    case Treatment::Guard:
      if (failed(guard(op, predicate)))
        return failure();
      break;
    }
  }
  return success();
}

LogicalResult Converger::flatten(scf::IfOp ifOp, Value outer) {
  Location loc = ifOp.getLoc();
  builder.setInsertionPoint(ifOp);
  Value condition = ifOp.getCondition();
  Value thenPredicate = conjunction(loc, outer, condition);
  if (failed(predicate(ifOp.getThenRegion().front(), thenPredicate)))
    return failure();
  bool hasElse = !ifOp.getElseRegion().empty();
  if (hasElse && !ifOp.getElseRegion().front().without_terminator().empty()) {
    builder.setInsertionPoint(ifOp);
    Value negated = arith::XOrIOp::create(
        builder, loc, condition,
        arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1));
    if (failed(predicate(ifOp.getElseRegion().front(),
                         conjunction(loc, outer, negated))))
      return failure();
  }
  // The branches' ops now run in every lane, before the branch.
  Block *parent = ifOp->getBlock();
  auto hoist = [&](Region &region) -> Operation * {
    Block &from = region.front();
    Operation *yield = from.getTerminator();
    parent->getOperations().splice(Block::iterator(ifOp), from.getOperations(),
                                   from.begin(), Block::iterator(yield));
    return yield;
  };
  Operation *thenYield = hoist(ifOp.getThenRegion());
  Operation *elseYield = hasElse ? hoist(ifOp.getElseRegion()) : nullptr;
  builder.setInsertionPoint(ifOp);
  SmallVector<Value> results;
  for (unsigned k = 0; k < ifOp.getNumResults(); ++k)
    results.push_back(arith::SelectOp::create(builder, loc, condition,
                                              thenYield->getOperand(k),
                                              elseYield->getOperand(k)));
  ifOp.replaceAllUsesWith(results);
  ifOp.erase();
  return success();
}

LogicalResult Converger::run() {
  // Functions holding warp ops, to a fixed point over calls.
  bool changed = true;
  while (changed) {
    changed = false;
    root->walk([&](FunctionOpInterface function) {
      if (!warpFunctions.contains(function) && holdsWarpOp(function)) {
        warpFunctions.insert(function);
        changed = true;
      }
    });
  }
  // The outermost branch around each warp op (or a call of a function
  // holding one) whose condition may differ between threads.
  llvm::SetVector<Operation *> branches;
  root->walk([&](Operation *op) {
    bool isCall = false;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      Operation *callee =
          SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr());
      isCall = callee && warpFunctions.contains(callee);
    }
    if (!options.mustReach(op) && !isCall)
      return;
    Operation *outermost = nullptr;
    for (Operation *parent = op->getParentOp();
         parent && !isa<FunctionOpInterface>(parent);
         parent = parent->getParentOp())
      if (auto ifOp = dyn_cast<scf::IfOp>(parent))
        if (!nabla::isBlockUniform(ifOp.getCondition()))
          outermost = ifOp;
    if (outermost)
      branches.insert(outermost);
  });
  for (Operation *branch : branches) {
    auto ifOp = cast<scf::IfOp>(branch);
    // Best effort: a branch that cannot be converted stays as it was.
    if (!options.required &&
        (!isConvertible(ifOp.getThenRegion().front()) ||
         (!ifOp.getElseRegion().empty() &&
          !isConvertible(ifOp.getElseRegion().front()))))
      continue;
    if (failed(flatten(ifOp, Value())))
      return failure();
  }
  return success();
}

LogicalResult nabla::convergeBranches(Operation *root,
                                      const ConvergenceOptions &options) {
  return Converger(root, options).run();
}
