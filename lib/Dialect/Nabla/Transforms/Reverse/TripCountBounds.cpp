//===- TripCountBounds.cpp - Trip counts bounded by value ranges ----------===//
//
// A loop reverse mode must tape (its reads are overwritten) whose bounds are
// run-time values has no static bound to size a private tape by. Often its
// bounds' ranges are known: `min(t + 1 - t2b, 32)`, clang's unrolled
// `(end & ~3) / 2` under `end > 0`. Upstream's integer range analysis gives
// each value's range over the whole function; it is not path-sensitive, so
// each bound is recomputed from its operands' ranges, narrowed by the scf.if
// tests the loop is under. The bound of the trip count follows.
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "CountedWhileLoops.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace nabla;

/// The largest trip count a loop whose bounds lie in these ranges can have
/// (0 when it cannot run); none beyond this many (a tape of that many slots
/// is no tape).
static constexpr int64_t kLargestDerivedBound = 1 << 16;

/// `range` with its signed and unsigned bounds each narrowed by the other
/// (a signed range of nonnegative values is also the unsigned one).
static ConstantIntRanges tightened(const ConstantIntRanges &range) {
  return range
      .intersection(ConstantIntRanges::fromSigned(range.smin(), range.smax()))
      .intersection(
          ConstantIntRanges::fromUnsigned(range.umin(), range.umax()));
}

/// `range` narrowed by `cmp` holding (or failing, `holds` false) when
/// `cmp` compares `v` with a value of known constant range.
static ConstantIntRanges narrowByTest(const ConstantIntRanges &range, Value v,
                                      arith::CmpIOp cmp, bool holds) {
  using P = arith::CmpIPredicate;
  P predicate = cmp.getPredicate();
  Value other;
  if (cmp.getLhs() == v) {
    other = cmp.getRhs();
  } else if (cmp.getRhs() == v) {
    other = cmp.getLhs();
    predicate = swappedPredicate(predicate);
  }
  std::optional<int64_t> c = other ? getConstantIntValue(other) : std::nullopt;
  if (!c)
    return range;
  if (!holds)
    predicate = arith::invertPredicate(predicate);
  unsigned width = range.smin().getBitWidth();
  APInt k(width, *c, /*isSigned=*/true);
  APInt one(width, 1);
  APInt smin = APInt::getSignedMinValue(width),
        smax = APInt::getSignedMaxValue(width);
  APInt umin = APInt::getMinValue(width), umax = APInt::getMaxValue(width);
  std::optional<ConstantIntRanges> implied;
  switch (predicate) {
  case P::sgt:
    if (k != smax)
      implied = ConstantIntRanges::fromSigned(k + one, smax);
    break;
  case P::sge: implied = ConstantIntRanges::fromSigned(k, smax); break;
  case P::slt:
    if (k != smin)
      implied = ConstantIntRanges::fromSigned(smin, k - one);
    break;
  case P::sle: implied = ConstantIntRanges::fromSigned(smin, k); break;
  case P::ugt:
    if (k != umax)
      implied = ConstantIntRanges::fromUnsigned(k + one, umax);
    break;
  case P::uge: implied = ConstantIntRanges::fromUnsigned(k, umax); break;
  case P::ult:
    if (k != umin)
      implied = ConstantIntRanges::fromUnsigned(umin, k - one);
    break;
  case P::ule: implied = ConstantIntRanges::fromUnsigned(umin, k); break;
  case P::eq: implied = ConstantIntRanges::constant(k); break;
  default: break;
  }
  return implied ? tightened(range.intersection(*implied)) : range;
}

std::optional<ConstantIntRanges> VJPEmitter::refinedRange(Value v,
                                                          Operation *at,
                                                          unsigned depth) {
  Type type = v.getType();
  if (!type.isIntOrIndex())
    return std::nullopt;
  unsigned width = type.isIndex() ? IndexType::kInternalStorageBitWidth
                                  : type.getIntOrFloatBitWidth();
  ConstantIntRanges range = ConstantIntRanges::maxRange(width);
  if (ranges)
    if (auto *lattice =
            ranges->lookupState<dataflow::IntegerValueRangeLattice>(v))
      if (!lattice->getValue().isUninitialized())
        range = lattice->getValue().getValue();
  // Recomputed from operands narrowed in turn (the tests guarding `at`
  // narrow them where the analysis, not path-sensitive, could not).
  Operation *def = v.getDefiningOp();
  auto infer = dyn_cast_or_null<InferIntRangeInterface>(def);
  if (infer && depth > 0 && def->getNumResults() == 1 &&
      def->getNumRegions() == 0) {
    SmallVector<ConstantIntRanges> operands;
    for (Value operand : def->getOperands()) {
      std::optional<ConstantIntRanges> r = refinedRange(operand, at, depth - 1);
      if (!r)
        break;
      operands.push_back(*r);
    }
    if (operands.size() == def->getNumOperands()) {
      std::optional<ConstantIntRanges> inferred;
      infer.inferResultRanges(operands, [&](Value, const ConstantIntRanges &r) {
        inferred = r;
      });
      if (inferred && inferred->smin().getBitWidth() == width)
        range = tightened(range.intersection(*inferred));
    }
  }
  // The scf.if tests `at` is under.
  for (Operation *parent = at; parent; parent = parent->getParentOp()) {
    auto ifOp = dyn_cast_or_null<scf::IfOp>(parent->getParentOp());
    if (!ifOp)
      continue;
    auto cmp = ifOp.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cmp || (cmp.getLhs() != v && cmp.getRhs() != v))
      continue;
    bool inThen = ifOp.getThenRegion().isAncestor(parent->getParentRegion());
    range = narrowByTest(range, v, cmp, inThen);
  }
  return range;
}

std::optional<int64_t> VJPEmitter::tripCountBound(scf::ForOp op) {
  auto function = op->getParentOfType<FunctionOpInterface>();
  if (!function)
    return std::nullopt;
  if (rangesRoot != function) {
    ranges = std::make_unique<DataFlowSolver>();
    ranges->load<dataflow::DeadCodeAnalysis>();
    ranges->load<dataflow::SparseConstantPropagation>();
    ranges->load<dataflow::IntegerRangeAnalysis>();
    rangesRoot = function;
    if (failed(ranges->initializeAndRun(function))) {
      ranges.reset();
      return std::nullopt;
    }
  }
  if (!ranges)
    return std::nullopt;
  std::optional<ConstantIntRanges> lb = refinedRange(op.getLowerBound(), op),
                                   ub = refinedRange(op.getUpperBound(), op),
                                   step = refinedRange(op.getStep(), op);
  if (!lb || !ub || !step || !step->smin().isStrictlyPositive())
    return std::nullopt;
  // scf.for compares its bounds as signed.
  int64_t low = lb->smin().getSExtValue(), high = ub->smax().getSExtValue(),
          stride = step->smin().getSExtValue();
  int64_t span;
  if (llvm::SubOverflow(high, low, span))
    return std::nullopt;
  int64_t count = span <= 0 ? 0 : llvm::divideCeilSigned(span, stride);
  if (count > kLargestDerivedBound)
    return std::nullopt;
  return count;
}
