//===- CountedWhileLoops.cpp - Do-while loops with a counter as scf.for ---===//
//
// See CountedWhileLoops.h.
//
//===----------------------------------------------------------------------===//

#include "CountedWhileLoops.h"
#include "ActivityAnalysis.h"
#include "GPUDerivatives.h"
#include "Reverse/ReverseMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace nabla;

namespace {

/// The parts of a counted do-while.
struct CountedWhile {
  unsigned counter;      // position of the counter among the loop values
  Value lb, bound;       // its initial value and the bound it is tested with
  Value step;            // its increment, positive (a constant, or a value
                         // defined outside the loop: a block or grid size)
  arith::CmpIPredicate predicate; // ne, slt, sle, ult or ule (counter on
                                  // the left)
  bool testsOld;         // the test reads the counter before its increment
  bool earlyExit;        // other exits (`break`): the count is a bound
};

scf::ForOp replaceWithFor(scf::WhileOp loop, Value count);
scf::ForOp replaceWithGuardedFor(scf::WhileOp loop, Value count);


/// True if `loop` is a do-while: its before region runs the body and passes
/// its values on as they will be next (same types), then possibly values
/// only the loop's results take (the last iteration's, of any type a zero
/// constant exists for); its after region only forwards the former.
bool isDoWhile(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  Block &after = loop.getAfter().front();
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  unsigned carried = before.getNumArguments();
  TypeRange passed = loop.getConditionOp().getArgs().getTypes();
  if (&after.front() != yield.getOperation() || passed.size() < carried ||
      yield.getOperands() != ValueRange(after.getArguments().take_front(carried)) ||
      passed.take_front(carried) != before.getArgumentTypes())
    return false;
  return llvm::all_of(passed.drop_front(carried), [](Type type) {
    return type.isIntOrIndexOrFloat();
  });
}

/// The values a for loop replacing the do-while `loop` starts from: its
/// inits, then a zero for each value only its results take (overwritten by
/// the first iteration).
SmallVector<Value> getForInits(OpBuilder &b, scf::WhileOp loop) {
  SmallVector<Value> inits(loop.getInits());
  for (Type type : TypeRange(loop.getConditionOp().getArgs().getTypes())
                        .drop_front(inits.size()))
    inits.push_back(arith::ConstantOp::create(b, loop.getLoc(), type,
                                              b.getZeroAttr(type)));
  return inits;
}

/// The comparison a do-while tests, the whole condition. Null otherwise.
arith::CmpIOp getDoWhileTest(scf::WhileOp loop) {
  if (!isDoWhile(loop))
    return {};
  auto cmp =
      loop.getConditionOp().getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp->getBlock() != &loop.getBefore().front())
    return {};
  return cmp;
}

/// An integer comparison: an arith.cmpi, or one negated.
struct Test {
  Value lhs, rhs;
  arith::CmpIPredicate predicate;
};

/// Where a loop's condition holds: a comparison it implies, and the value a
/// condition argument takes there.
struct ContinuingPath {
  Test test;
  Value carried;
};

/// The paths on which `cond` (an i1, or an integer read as true when
/// nonzero) holds — or, with `negated`, fails — each with a comparison it
/// implies and the value `carried` has there, followed through negation
/// (`xor` with true), `and`/`or` and their `select` forms (a conjunction
/// holds where either conjunct does), integer casts of a bit and the
/// results of scf.if (a branch yielding false never continues). False when
/// some path implies no comparison that `accept`s; of a conjunction, the
/// first conjunct whose paths are all accepted is taken.
bool collectContinuingPaths(
    Value cond, Value carried, bool negated,
    function_ref<bool(const ContinuingPath &)> accept,
    SmallVectorImpl<ContinuingPath> &paths) {
  if (std::optional<int64_t> constant = getConstantIntValue(cond))
    // Never continues; an always-true value implies no test.
    return (*constant != 0) == negated;
  Operation *def = cond.getDefiningOp();
  if (!def)
    return false;
  bool bit = cond.getType().isInteger(1);
  if (auto cmp = dyn_cast<arith::CmpIOp>(def)) {
    arith::CmpIPredicate predicate = cmp.getPredicate();
    if (negated)
      predicate = arith::invertPredicate(predicate);
    ContinuingPath path{{cmp.getLhs(), cmp.getRhs(), predicate}, carried};
    if (!accept(path))
      return false;
    paths.push_back(path);
    return true;
  }
  if (isa<arith::TruncIOp, arith::ExtUIOp>(def) &&
      (def->getOperand(0).getType().isInteger(1) || bit))
    return collectContinuingPaths(def->getOperand(0), carried, negated, accept,
                                  paths);
  // Terms (value, negated) whose conjunction `cond` (or its negation) is.
  SmallVector<std::pair<Value, bool>, 2> conjuncts;
  auto isOne = [](Value v) { return matchPattern(v, m_One()); };
  auto isZero = [](Value v) { return matchPattern(v, m_Zero()); };
  if (bit && isa<arith::XOrIOp>(def) && isOne(def->getOperand(1)))
    return collectContinuingPaths(def->getOperand(0), carried, !negated,
                                  accept, paths);
  if (bit && isa<arith::AndIOp>(def) && !negated) {
    conjuncts = {{def->getOperand(0), false}, {def->getOperand(1), false}};
  } else if (bit && isa<arith::OrIOp>(def) && negated) {
    conjuncts = {{def->getOperand(0), true}, {def->getOperand(1), true}};
  } else if (auto select = dyn_cast<arith::SelectOp>(def); select && bit) {
    Value c = select.getCondition(), a = select.getTrueValue(),
          b = select.getFalseValue();
    if (!negated && isZero(b)) // c && a
      conjuncts = {{c, false}, {a, false}};
    else if (!negated && isZero(a)) // !c && b
      conjuncts = {{c, true}, {b, false}};
    else if (negated && isOne(a)) // !(c || b)
      conjuncts = {{c, true}, {b, true}};
    else if (negated && isOne(b)) // !(!c || a)
      conjuncts = {{c, false}, {a, true}};
  }
  if (!conjuncts.empty()) {
    for (auto [conjunct, negate] : conjuncts) {
      SmallVector<ContinuingPath> found;
      if (collectContinuingPaths(conjunct, carried, negate, accept, found)) {
        paths.append(found);
        return true;
      }
    }
    return false;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
    unsigned position = cast<OpResult>(cond).getResultNumber();
    auto carriedResult = dyn_cast<OpResult>(carried);
    bool fromIf = carriedResult && carriedResult.getOwner() == ifOp;
    if (!fromIf && ifOp->isAncestor(carried.getParentRegion()->getParentOp()))
      return false;
    for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
      if (region->empty())
        return false;
      auto yield = cast<scf::YieldOp>(region->front().getTerminator());
      Value branchCarried =
          fromIf ? yield.getOperand(carriedResult.getResultNumber()) : carried;
      if (!collectContinuingPaths(yield.getOperand(position), branchCarried,
                                  negated, accept, paths))
        return false;
    }
    return true;
  }
  return false;
}

/// The counter, its bound, step and test that `test` compares, with
/// `next` the value the counter takes where the loop continues. Counter
/// position `k`.
std::optional<CountedWhile> matchTest(scf::WhileOp loop, unsigned k,
                                      const Test &cmp, Value next) {
  Block &before = loop.getBefore().front();
  auto add = next.getDefiningOp<arith::AddIOp>();
  if (!add || k >= before.getNumArguments())
    return std::nullopt;
  Value iv = before.getArgument(k);
  Value other = add.getLhs() == iv   ? add.getRhs()
                : add.getRhs() == iv ? add.getLhs()
                                     : Value();
  if (!other)
    return std::nullopt;
  // A constant step is positive; a step defined outside the loop is
  // assumed positive under an ordered test (a loop `i < n` whose step is
  // not would never end), and a `ne` test needs a constant step.
  std::optional<int64_t> constantStep = getConstantIntValue(other);
  if (constantStep ? *constantStep <= 0
                   : loop->isAncestor(other.getParentRegion()->getParentOp()))
    return std::nullopt;
  arith::CmpIPredicate predicate = cmp.predicate;
  Value bound;
  bool testsOld = false;
  for (Value counter : {next, iv}) {
    if (cmp.lhs == counter) {
      bound = cmp.rhs;
    } else if (cmp.rhs == counter) {
      bound = cmp.lhs;
      predicate = swappedPredicate(predicate);
    }
    if (bound) {
      testsOld = counter == iv;
      break;
    }
  }
  // The bound is defined outside the loop.
  if (!bound || loop->isAncestor(bound.getParentRegion()->getParentOp()))
    return std::nullopt;
  using P = arith::CmpIPredicate;
  if (!llvm::is_contained({P::ne, P::slt, P::sle, P::ult, P::ule}, predicate))
    return std::nullopt;
  if (!constantStep && predicate == P::ne)
    return std::nullopt;
  return CountedWhile{k,         loop.getInits()[k], bound, other, predicate,
                      testsOld, /*earlyExit=*/false};
}

/// True if `loop` writes memory defined outside it (a tile it reloads, an
/// element it updates): the loops whose recomputation reverse mode may not
/// be able to repeat.
bool writesOuterMemory(Operation *loop) {
  return loop
      ->walk([&](Operation *op) {
        auto effects = dyn_cast<MemoryEffectOpInterface>(op);
        if (!effects)
          return WalkResult::advance();
        SmallVector<MemoryEffects::EffectInstance> list;
        effects.getEffects(list);
        for (auto &effect : list) {
          Value v = effect.getValue();
          if (isa<MemoryEffects::Write>(effect.getEffect()) &&
              (!v || !loop->isAncestor(v.getParentRegion()->getParentOp())))
            return WalkResult::interrupt();
        }
        return WalkResult::advance();
      })
      .wasInterrupted();
}

std::optional<CountedWhile> match(scf::WhileOp loop) {
  scf::ConditionOp condition = loop.getConditionOp();
  if (arith::CmpIOp cmp = getDoWhileTest(loop)) {
    for (auto [k, next] : llvm::enumerate(condition.getArgs()))
      if (auto counted = matchTest(
              loop, k, {cmp.getLhs(), cmp.getRhs(), cmp.getPredicate()}, next))
        return counted;
    return std::nullopt;
  }
  // Other exits besides the counter's test (`if (...) break;` in a counted
  // loop): every path on which the loop continues tests the same counter
  // against the same bound, so its count bounds the iterations. Only for
  // a loop in a nest that writes memory from outside it (which reverse mode
  // may have to tape by trip counts) and holding no barrier (the
  // iterations left after the exit are skipped under a flag: no barrier
  // under it).
  Operation *outermost = loop;
  for (Operation *parent = loop->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<scf::ForOp, scf::WhileOp>(parent))
      outermost = parent;
  if (!isDoWhile(loop) || !writesOuterMemory(outermost) ||
      holdsBarrier(loop))
    return std::nullopt;
  for (auto [k, carried] : llvm::enumerate(condition.getArgs())) {
    // Each path's test is the counter's; all the same test.
    std::optional<CountedWhile> counted;
    auto accept = [&, k = k](const ContinuingPath &path) {
      std::optional<CountedWhile> each =
          matchTest(loop, k, path.test, path.carried);
      return each && (!counted || (each->bound == counted->bound &&
                                   each->step == counted->step &&
                                   each->predicate == counted->predicate &&
                                   each->testsOld == counted->testsOld));
    };
    SmallVector<ContinuingPath> paths;
    if (!collectContinuingPaths(condition.getCondition(), carried,
                                /*negated=*/false, accept, paths) ||
        paths.empty())
      continue;
    counted = matchTest(loop, k, paths.front().test, paths.front().carried);
    if (!llvm::all_of(paths, accept))
      continue;
    counted->earlyExit = true;
    return counted;
  }
  return std::nullopt;
}

void rewrite(scf::WhileOp loop, const CountedWhile &counted) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Type type = counted.lb.getType();
  Value step = counted.step;
  Value one = arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1));
  Value span = arith::SubIOp::create(b, loc, counted.bound, counted.lb);
  // The counter values from lb that pass the test: ceildiv(n - lb, c) of
  // them under `<`, (n - lb) / c + 1 under `<=`, (n - lb) / c under `!=`
  // (the counter reaches n); any at all when lb itself passes.
  using P = arith::CmpIPredicate;
  P predicate = counted.predicate;
  Value steps;
  switch (predicate) {
  case P::slt: steps = arith::CeilDivSIOp::create(b, loc, span, step); break;
  case P::ult: steps = arith::CeilDivUIOp::create(b, loc, span, step); break;
  case P::sle:
    steps = arith::AddIOp::create(
        b, loc, arith::DivSIOp::create(b, loc, span, step), one);
    break;
  case P::ule:
    steps = arith::AddIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, span, step), one);
    break;
  default: steps = arith::DivUIOp::create(b, loc, span, step); break;
  }
  Value more =
      arith::CmpIOp::create(b, loc, predicate, counted.lb, counted.bound);
  // Testing the new counter, the body runs once more than the steps that
  // pass the test after the first (at least once); testing the old one,
  // once more than the steps that pass it.
  Value count;
  if (counted.testsOld) {
    Value zero =
        arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 0));
    count = arith::AddIOp::create(
        b, loc, arith::SelectOp::create(b, loc, more, steps, zero), one);
  } else {
    count = arith::SelectOp::create(b, loc, more, steps, one);
  }
  if (counted.earlyExit)
    replaceWithGuardedFor(loop, count);
  else
    replaceWithFor(loop, count);
}

/// The parts of a halving do-while: `for (s = s0; s > 0; s >>= 1)`.
struct HalvingWhile {
  unsigned counter; // position of the halved value among the loop values
  Value first;      // its initial value
  bool positiveOnly; // a signed halving or test: s0 <= 0 runs once
};

/// True if `next` is `iv` halved: shrui/shrsi by 1, divui/divsi by 2; sets
/// `isSigned` for the signed ones.
bool isHalving(Value next, Value iv, bool &isSigned) {
  Operation *def = next.getDefiningOp();
  if (!def || def->getNumOperands() != 2 || def->getOperand(0) != iv)
    return false;
  std::optional<int64_t> by = getConstantIntValue(def->getOperand(1));
  if (!by)
    return false;
  isSigned = isa<arith::ShRSIOp, arith::DivSIOp>(def);
  return (isa<arith::ShRUIOp, arith::ShRSIOp>(def) && *by == 1) ||
         (isa<arith::DivUIOp, arith::DivSIOp>(def) && *by == 2);
}

std::optional<HalvingWhile> matchHalving(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  scf::ConditionOp condition = loop.getConditionOp();
  arith::CmpIOp cmp = getDoWhileTest(loop);
  std::optional<int64_t> bound =
      cmp ? getConstantIntValue(cmp.getRhs()) : std::nullopt;
  if (!bound)
    return std::nullopt;
  using P = arith::CmpIPredicate;
  P p = cmp.getPredicate();
  for (auto [k, next] : llvm::enumerate(condition.getArgs())) {
    Value iv = before.getArgument(k);
    bool signedOp = false;
    if (!isa<IntegerType, IndexType>(iv.getType()) ||
        !isHalving(next, iv, signedOp))
      continue;
    // The halved value is positive (s > 0 after the step), or the old one
    // was at least 2.
    bool testsNext = cmp.getLhs() == next && *bound == 0 &&
                     (p == P::sgt || (!signedOp && (p == P::ne || p == P::ugt)));
    bool testsOld =
        cmp.getLhs() == iv &&
        ((*bound == 1 && (p == P::sgt || (!signedOp && p == P::ugt))) ||
         (*bound == 2 && (p == P::sge || (!signedOp && p == P::uge))));
    if (!testsNext && !testsOld)
      continue;
    bool signedTest = p == P::sgt || p == P::sge;
    return HalvingWhile{unsigned(k), loop.getInits()[k],
                        signedOp || (testsOld && signedTest)};
  }
  return std::nullopt;
}

/// The number of bits of `x` up to its highest set one (0 for 0), with
/// compares and selects (every target lowers them).
Value bitLength(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v));
  };
  Value length = constant(0);
  for (unsigned shift = llvm::PowerOf2Ceil(width) / 2; shift > 0; shift /= 2) {
    if (shift >= width)
      continue;
    Value big = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, x,
                                      constant(int64_t(1) << shift));
    length = arith::SelectOp::create(
        b, loc, big, arith::AddIOp::create(b, loc, length, constant(shift)),
        length);
    x = arith::SelectOp::create(
        b, loc, big, arith::ShRUIOp::create(b, loc, x, constant(shift)), x);
  }
  Value nonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                        constant(0));
  return arith::AddIOp::create(
      b, loc, length, arith::SelectOp::create(b, loc, nonZero, constant(1),
                                              constant(0)));
}

void rewriteHalving(scf::WhileOp loop, const HalvingWhile &halving) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value first = halving.first;
  Type type = first.getType();
  Value one = arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1));
  Value zero =
      arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 0));
  // s0, s0 / 2, ..., 1: the bits of s0; the body runs at least once.
  Value count = arith::MaxUIOp::create(b, loc, bitLength(b, loc, first), one);
  if (halving.positiveOnly)
    count = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, first, zero),
        count, one);
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  scf::ForOp forOp = replaceWithFor(loop, count);
  // A static bound (the halvings of the type's bits) lets the loop be taped
  // in private memory; the counter is marked for the reduction-tree
  // strategy.
  forOp->setAttr(kMaxTripCountAttrName,
                 b.getI64IntegerAttr(std::max(1u, width)));
  forOp->setAttr(kHalvingCounterAttrName,
                 b.getI64IntegerAttr(halving.counter));
}

/// An scf.for of `count` iterations from 0 before `loop`, carrying `flags`
/// then the values a for loop replacing `loop` carries (getForInits), with
/// an empty body.
scf::ForOp createCountedFor(OpBuilder &b, scf::WhileOp loop, Value count,
                            ArrayRef<Value> flags) {
  Location loc = loop.getLoc();
  if (!count.getType().isIndex())
    count = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), count);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value unit = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> inits(flags);
  llvm::append_range(inits, getForInits(b, loop));
  auto forOp = scf::ForOp::create(b, loc, zero, count, unit, inits);
  // Without iter_args the builder adds a terminator.
  Block *body = forOp.getBody();
  if (!body->empty())
    body->back().erase();
  return forOp;
}

/// Clones `loop`'s before region at `builder` with its arguments taking
/// `values`; returns what it passes on (the condition first when
/// `withCondition`, then the condition's arguments).
SmallVector<Value> cloneBeforeRegion(OpBuilder &builder, scf::WhileOp loop,
                                     ValueRange values, bool withCondition) {
  IRMapping mapping;
  Block &before = loop.getBefore().front();
  for (auto [arg, carried] : llvm::zip(before.getArguments(), values))
    mapping.map(arg, carried);
  for (Operation &op : before.without_terminator())
    builder.clone(op, mapping);
  scf::ConditionOp condition = loop.getConditionOp();
  SmallVector<Value> next;
  if (withCondition)
    next.push_back(mapping.lookupOrDefault(condition.getCondition()));
  for (Value v : condition.getArgs())
    next.push_back(mapping.lookupOrDefault(v));
  return next;
}

/// Replaces `loop` (forwarding after region) with an scf.for of `count`
/// iterations running its before region and carrying its values.
scf::ForOp replaceWithFor(scf::WhileOp loop, Value count) {
  OpBuilder b(loop);
  scf::ForOp forOp = createCountedFor(b, loop, count, {});
  OpBuilder inner = OpBuilder::atBlockEnd(forOp.getBody());
  scf::YieldOp::create(inner, loop.getLoc(),
                       cloneBeforeRegion(inner, loop, forOp.getRegionIterArgs(),
                                         /*withCondition=*/false));
  loop.replaceAllUsesWith(forOp.getResults());
  loop.erase();
  return forOp;
}

/// Replaces `loop` (forwarding after region, at most `count` iterations)
/// with an scf.for of `count` iterations carrying a flag, true while the
/// loop has not exited, and its values: an iteration runs the before region
/// under the flag; after the exit the values the loop ended with are
/// carried unchanged.
scf::ForOp replaceWithGuardedFor(scf::WhileOp loop, Value count) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value running = arith::ConstantIntOp::create(b, loc, 1, 1);
  scf::ForOp forOp = createCountedFor(b, loop, count, {running});
  OpBuilder inner = OpBuilder::atBlockEnd(forOp.getBody());
  Value live = forOp.getRegionIterArgs().front();
  ValueRange values = forOp.getRegionIterArgs().drop_front();
  SmallVector<Type> types{inner.getI1Type()};
  llvm::append_range(types, values.getTypes());
  auto guard = scf::IfOp::create(inner, loc, types, live,
                                 /*withElseRegion=*/true);
  OpBuilder then = guard.getThenBodyBuilder();
  scf::YieldOp::create(
      then, loc,
      cloneBeforeRegion(then, loop, values, /*withCondition=*/true));
  OpBuilder otherwise = guard.getElseBodyBuilder();
  SmallVector<Value> kept{
      arith::ConstantIntOp::create(otherwise, loc, 0, 1).getResult()};
  llvm::append_range(kept, values);
  scf::YieldOp::create(otherwise, loc, kept);
  scf::YieldOp::create(inner, loc, guard.getResults());
  loop.replaceAllUsesWith(forOp.getResults().drop_front());
  loop.erase();
  return forOp;
}

} // namespace

arith::CmpIPredicate nabla::swappedPredicate(arith::CmpIPredicate predicate) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::slt: return P::sgt;
  case P::sgt: return P::slt;
  case P::sle: return P::sge;
  case P::sge: return P::sle;
  case P::ult: return P::ugt;
  case P::ugt: return P::ult;
  case P::ule: return P::uge;
  case P::uge: return P::ule;
  default: return predicate; // eq, ne
  }
}

/// Moves reads of buffers nothing writes, at indices defined outside the
/// do-while `loop`, in front of it: the bound clang reloads every iteration
/// (`k < rowptr[row + 1]` when the loop's stores may alias the offsets, as C
/// allows) is then defined outside the loop. The before region runs at
/// least once, so the read happened anyway.
static void hoistInvariantReads(scf::WhileOp loop) {
  if (!isDoWhile(loop))
    return;
  for (Operation &op : llvm::make_early_inc_range(
           loop.getBefore().front().without_terminator())) {
    auto load = dyn_cast<memref::LoadOp>(&op);
    auto buffer = load ? dyn_cast<BlockArgument>(load.getMemRef()) : nullptr;
    if (!buffer ||
        !isa<FunctionOpInterface>(buffer.getOwner()->getParentOp()) ||
        llvm::any_of(load.getIndices(),
                     [&](Value index) {
                       return loop->isAncestor(
                           index.getParentRegion()->getParentOp());
                     }) ||
        !isNeverWritten(buffer))
      continue;
    load->moveBefore(loop);
  }
}

void nabla::countWhileLoops(func::FuncOp function) {
  SmallVector<scf::WhileOp> loops;
  function.walk([&](scf::WhileOp loop) { loops.push_back(loop); });
  for (scf::WhileOp loop : loops) {
    hoistInvariantReads(loop);
    if (std::optional<CountedWhile> counted = match(loop))
      rewrite(loop, *counted);
    else if (std::optional<HalvingWhile> halving = matchHalving(loop))
      rewriteHalving(loop, *halving);
  }
}
