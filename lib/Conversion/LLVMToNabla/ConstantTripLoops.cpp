//===- ConstantTripLoops.cpp - scf.while with a known trip count → scf.for ===//
//
// Optimizers leave loops with constant bounds rolled at -O1 (a tree
// reduction `for (s = 32; s > 0; s >>= 1)`, rotated into a do-while). Lifted
// control flow makes them scf.while, whose trip count the AD cannot bound, so
// it could only checkpoint them — impossible when the loop updates memory in
// place. When the loop's condition depends only on loop-carried integers that
// start as constants (and on constants), the trip count N is found by
// running the condition and those integers' updates on constants; the loop
// then becomes `scf.for 0 to N` whose body is the before region followed by
// the after region, and one more copy of the before region after it (a while
// runs its before region N + 1 times). The AD tapes such loops.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

/// The most iterations simulated; longer loops stay scf.while.
static constexpr int64_t kMaxSimulatedTrips = 4096;

/// Folds the ops of `block` on the constants in `known` (block arguments and
/// values from above), adding what folds to `known`. Returns the constants
/// of the terminator's operands (null where unknown).
static SmallVector<Attribute> evaluate(Block &block,
                                       DenseMap<Value, Attribute> &known) {
  auto valueOf = [&](Value value) -> Attribute {
    if (Attribute attr = known.lookup(value))
      return attr;
    Attribute attr;
    if (value.getParentBlock() != &block &&
        matchPattern(value, m_Constant(&attr)))
      return attr;
    return nullptr;
  };
  for (Operation &op : block.without_terminator()) {
    if (op.getNumRegions() || op.getNumResults() == 0)
      continue;
    SmallVector<Attribute> operands;
    for (Value operand : op.getOperands())
      operands.push_back(valueOf(operand));
    if (llvm::any_of(operands, [](Attribute a) { return !a; }))
      continue;
    SmallVector<OpFoldResult> results;
    if (failed(op.fold(operands, results)) ||
        results.size() != op.getNumResults())
      continue;
    for (auto [result, folded] : llvm::zip(op.getResults(), results)) {
      if (auto attr = dyn_cast<Attribute>(folded))
        known[result] = attr;
      else if (Attribute attr = valueOf(cast<Value>(folded)))
        known[result] = attr;
    }
  }
  SmallVector<Attribute> terminator;
  for (Value operand : block.getTerminator()->getOperands())
    terminator.push_back(valueOf(operand));
  return terminator;
}

/// The number of times `loop` runs its after region, when its condition is
/// a function of constants only; std::nullopt otherwise.
static std::optional<int64_t> simulateTripCount(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  Block &after = loop.getAfter().front();
  SmallVector<Attribute> state;
  for (Value init : loop.getInits()) {
    Attribute attr;
    state.push_back(isa<IntegerType, IndexType>(init.getType()) &&
                            matchPattern(init, m_Constant(&attr))
                        ? attr
                        : Attribute());
  }
  for (int64_t trips = 0; trips <= kMaxSimulatedTrips; ++trips) {
    DenseMap<Value, Attribute> known;
    for (auto [arg, attr] : llvm::zip(before.getArguments(), state))
      if (attr)
        known[arg] = attr;
    SmallVector<Attribute> condition = evaluate(before, known);
    auto flag = dyn_cast_or_null<IntegerAttr>(condition[0]);
    if (!flag)
      return std::nullopt;
    if (flag.getValue().isZero())
      return trips;
    DenseMap<Value, Attribute> afterKnown;
    for (auto [arg, attr] :
         llvm::zip(after.getArguments(), ArrayRef(condition).drop_front()))
      if (attr)
        afterKnown[arg] = attr;
    state = evaluate(after, afterKnown);
  }
  return std::nullopt;
}

/// Replaces `loop` by an scf.for running `trips` times (see the file
/// comment).
static void rewriteAsFor(scf::WhileOp loop, int64_t trips) {
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  Block &before = loop.getBefore().front();
  Block &after = loop.getAfter().front();
  Value lower = arith::ConstantIndexOp::create(builder, loc, 0);
  Value upper = arith::ConstantIndexOp::create(builder, loc, trips);
  Value step = arith::ConstantIndexOp::create(builder, loc, 1);
  auto cloneBefore = [&](OpBuilder &b, ValueRange args) {
    IRMapping mapping;
    mapping.map(before.getArguments(), args);
    for (Operation &op : before.without_terminator())
      b.clone(op, mapping);
    auto condition = cast<scf::ConditionOp>(before.getTerminator());
    return llvm::map_to_vector(condition.getArgs(), [&](Value v) {
      return mapping.lookupOrDefault(v);
    });
  };
  auto forOp = scf::ForOp::create(
      builder, loc, lower, upper, step, loop.getInits(),
      [&](OpBuilder &b, Location, Value, ValueRange args) {
        SmallVector<Value> forwarded = cloneBefore(b, args);
        IRMapping mapping;
        mapping.map(after.getArguments(), forwarded);
        for (Operation &op : after.without_terminator())
          b.clone(op, mapping);
        auto yield = cast<scf::YieldOp>(after.getTerminator());
        scf::YieldOp::create(
            b, yield.getLoc(),
            llvm::map_to_vector(yield.getOperands(), [&](Value v) {
              return mapping.lookupOrDefault(v);
            }));
      });
  builder.setInsertionPointAfter(forOp);
  SmallVector<Value> results = cloneBefore(builder, forOp.getResults());
  loop.replaceAllUsesWith(results);
  loop.erase();
}

void nabla::raise::convertConstantTripLoops(Operation *root) {
  SmallVector<scf::WhileOp> loops;
  root->walk([&](scf::WhileOp loop) { loops.push_back(loop); });
  for (scf::WhileOp loop : loops)
    if (std::optional<int64_t> trips = simulateTripCount(loop))
      rewriteAsFor(loop, *trips);
}
