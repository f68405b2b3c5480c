//===- LoopPreaccumulation.cpp - Reversing loops by their Jacobian --------===//
//
// The preaccumulation strategy, for loops whose differentiated state is a few
// scalars updated by a straight line of pure float ops (a per-thread
// recurrence such as a = 0.5 a + 0.4 x a / (1 + a^2) with a trip count from a
// kernel parameter). The forward sweep runs the loop once, carrying next to
// its state the tangents of every state value along every column; the columns
// are the distinct differentiated values from outside the loop that it
// depends on: the inits of its state and what its body reads (a = x then x
// read inside is one column). After the loop those tangents are the Jacobian
// J (k x c), kept in per-thread slots; the reverse sweep adds J^T times the
// results' adjoints to the columns' adjoints. Nothing is taped per iteration
// and nothing is recomputed: the cost is the primal loop plus k c tangent
// updates per op, against checkpointing's repeated forward steps. This is the
// forward-mode adjoint an expert writes for a scalar-to-scalar map.
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "DerivativeRules.h"

#include "llvm/ADT/SetVector.h"

#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nabla;

/// The largest Jacobian (entries) carried through a loop: beyond it the
/// tangents cost more than a tape or checkpoints.
static constexpr unsigned kMaxPreaccumulated = 8;

LogicalResult PreaccumulationStrategy::forward(VJPEmitter &emitter,
                                               scf::ForOp op) {
  return emitter.forwardPreaccumulatedFor(op, *this);
}

LogicalResult PreaccumulationStrategy::reverse(VJPEmitter &emitter,
                                               scf::ForOp op,
                                               AdjointScope &outer) {
  return emitter.reversePreaccumulatedFor(op, *this, outer);
}

bool VJPEmitter::canPreaccumulate(scf::ForOp op,
                                  PreaccumulationStrategy &plan) {
  // Outside every other loop of the function: the Jacobian's slots need no
  // per-iteration copies, and no enclosing reversal recomputes this loop.
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<LoopLikeOpInterface>(parent))
      return false;
  FloatType floatType;
  auto sameFloat = [&](Type type) {
    auto f = dyn_cast<FloatType>(type);
    if (!f || (floatType && f != floatType))
      return false;
    floatType = f;
    return true;
  };
  SmallVector<unsigned> state;
  for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
    if (act.isVaried(arg) || act.isVaried(op.getInitArgs()[i]) ||
        act.isVaried(op.getResult(i))) {
      if (!sameFloat(arg.getType()))
        return false;
      state.push_back(i);
    }
  if (state.empty())
    return false;
  // Columns: the state's differentiated inits first, then the inputs.
  SetVector<Value> inputs;
  for (unsigned position : state)
    if (act.isVaried(op.getInitArgs()[position]))
      inputs.insert(op.getInitArgs()[position]);
  auto noteInput = [&](Value v) {
    if (!act.isVaried(v) || op->isAncestor(v.getParentRegion()->getParentOp()))
      return true;
    inputs.insert(v);
    return sameFloat(v.getType());
  };
  for (Operation &inner : op.getBody()->getOperations()) {
    if (inner.getNumRegions())
      return false;
    // No access to differentiated memory: its adjoints would need every
    // iteration's indices.
    if (llvm::any_of(inner.getOperands(),
                     [&](Value v) { return act.isShadowed(v); }))
      return false;
    if (isa<scf::YieldOp>(inner)) {
      for (Value v : inner.getOperands())
        if (!noteInput(v))
          return false;
      continue;
    }
    bool varied = llvm::any_of(inner.getResults(),
                               [&](Value r) { return act.isVaried(r); });
    if (!varied)
      continue;
    if (inner.getNumResults() != 1 ||
        !sameFloat(inner.getResult(0).getType()) ||
        !isMemoryEffectFree(&inner) || !hasDerivativeRule(&inner) ||
        isa<arith::ExtFOp, arith::TruncFOp>(inner))
      return false;
    for (Value v : inner.getOperands())
      if (isa<FloatType>(v.getType()) && !noteInput(v))
        return false;
  }
  if (inputs.empty() || state.size() * inputs.size() > kMaxPreaccumulated)
    return false;
  plan.state = std::move(state);
  plan.inputs = inputs.takeVector();
  return true;
}

LogicalResult
VJPEmitter::forwardPreaccumulatedFor(scf::ForOp op,
                                     PreaccumulationStrategy &plan) {
  Location loc = op.getLoc();
  unsigned k = plan.state.size(), columns = plan.inputs.size();
  Type floatType = op.getRegionIterArgs()[plan.state.front()].getType();
  Value zero = createZero(b, loc, floatType);
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, 1.0));
  // At entry each state value is its init: tangent 1 along the init's column.
  SmallVector<Value> inits = mapped(op.getInitArgs());
  unsigned primalCount = inits.size();
  for (unsigned position : plan.state)
    for (Value column : plan.inputs)
      inits.push_back(column == op.getInitArgs()[position] ? one : zero);
  auto loop = scf::ForOp::create(b, loc, fwd.lookup(op.getLowerBound()),
                                 fwd.lookup(op.getUpperBound()),
                                 fwd.lookup(op.getStep()), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    clearTerminator(*body);
    b.setInsertionPointToEnd(body);
    // src value → its tangent along each column (null: zero).
    DenseMap<Value, SmallVector<Value>> tangents;
    fwd.map(op.getInductionVar(), loop.getInductionVar());
    for (auto [src, dst] :
         llvm::zip(op.getRegionIterArgs(),
                   loop.getRegionIterArgs().take_front(primalCount)))
      fwd.map(src, dst);
    for (auto [i, position] : llvm::enumerate(plan.state)) {
      SmallVector<Value> &row = tangents[op.getRegionIterArgs()[position]];
      for (unsigned j = 0; j < columns; ++j)
        row.push_back(loop.getRegionIterArgs()[primalCount + i * columns + j]);
    }
    for (auto [l, input] : llvm::enumerate(plan.inputs)) {
      SmallVector<Value> &row = tangents[input];
      row.assign(columns, Value());
      row[l] = one;
    }
    for (Operation &inner : op.getBody()->without_terminator()) {
      // Body values stay inside the loop: mapped, not cached by enclosing
      // scf.ifs (defined() is for values the reverse sweep may use).
      Operation *clone = b.clone(inner, fwd);
      if (!llvm::any_of(inner.getResults(),
                        [&](Value r) { return act.isVaried(r); }) ||
          hasZeroDerivative(&inner))
        continue;
      FailureOr<SmallVector<Value>> partials = emitPartials(b, clone);
      if (failed(partials))
        return inner.emitOpError("has no partial derivatives to preaccumulate");
      SmallVector<Value> row(columns);
      for (auto [operand, partial] :
           llvm::zip(inner.getOperands(), *partials)) {
        auto it = tangents.find(operand);
        if (!partial || it == tangents.end())
          continue;
        for (unsigned j = 0; j < columns; ++j)
          if (Value t = it->second[j])
            row[j] = addDerivatives(
                b, loc, row[j],
                t == one ? partial : scaleByPartial(b, loc, t, partial));
      }
      tangents[inner.getResult(0)] = std::move(row);
    }
    auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
    SmallVector<Value> yields = mapped(yield.getOperands());
    for (unsigned position : plan.state) {
      auto it = tangents.find(yield.getOperand(position));
      for (unsigned j = 0; j < columns; ++j) {
        Value t = it == tangents.end() ? Value() : it->second[j];
        yields.push_back(t ? t : zero);
      }
    }
    scf::YieldOp::create(b, loc, yields);
  }
  for (auto [src, dst] : llvm::zip(op.getResults(), loop.getResults()))
    defined(src, dst);
  // The Jacobian's slots live at function entry, where the reverse sweep
  // (after every region has closed) can read them.
  {
    OpBuilder::InsertionGuard guard(b);
    if (loopOptions.split) {
      // Split mode: in the global tape, for the reverse kernel.
      setInsertionPointAtEntry();
      plan.jacobian = createGlobalSlots(
          b, loc, floatType, arith::ConstantIndexOp::create(b, loc, k * columns));
      hoistAnchor = plan.jacobian.getDefiningOp();
    } else {
      b.setInsertionPointToStart(entry);
      plan.jacobian = createPrivateSlots(b, loc, floatType, k * columns);
    }
  }
  for (unsigned e = 0; e < k * columns; ++e)
    storePrivateSlot(b, loc, loop.getResult(primalCount + e), plan.jacobian,
                     arith::ConstantIndexOp::create(b, loc, e));
  return success();
}

LogicalResult VJPEmitter::reversePreaccumulatedFor(
    scf::ForOp op, const PreaccumulationStrategy &plan, AdjointScope &outer) {
  Location loc = op.getLoc();
  unsigned k = plan.state.size(), columns = plan.inputs.size();
  Type floatType = op.getRegionIterArgs()[plan.state.front()].getType();
  SmallVector<Value> adjoints;
  for (unsigned position : plan.state)
    adjoints.push_back(outer.get(op.getResult(position)));
  // Column j of J^T times the results' adjoints.
  auto column = [&](unsigned j) {
    Value sum;
    for (unsigned i = 0; i < k; ++i) {
      if (!adjoints[i])
        continue;
      Value entry = loadPrivateSlot(
          b, loc, plan.jacobian,
          arith::ConstantIndexOp::create(b, loc, i * columns + j), floatType);
      sum = addDerivatives(b, loc, sum,
                           arith::MulFOp::create(b, loc, adjoints[i], entry));
    }
    return sum;
  };
  for (auto [j, input] : llvm::enumerate(plan.inputs))
    outer.add(b, loc, input, column(j));
  return success();
}

void PreaccumulationStrategy::remark(Operation *loop, int64_t bytes) const {
  loop->emitRemark() << "loop reversed by its Jacobian, preaccumulated in "
                        "forward mode ("
                     << state.size() << " state x " << inputs.size()
                     << " columns): " << bytes << " bytes per thread";
}
