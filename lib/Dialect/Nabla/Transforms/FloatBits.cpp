//===- FloatBits.cpp - Floats moved as integer bits -----------------------===//
//
// Rewrites integer moves of a float's bits back into float operations
// (forwardFloatBits) and refuses, with a located error, any other path by
// which a differentiated float's bits become a float again
// (checkFloatBits). See FloatBits.h.
//
//===----------------------------------------------------------------------===//

#include "FloatBits.h"

#include "ActivityAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace nabla;

namespace {

/// The float whose bits `v` is (`arith.bitcast` of a float of the same
/// width), or null.
Value floatOfBits(Value v) {
  auto cast = v.getDefiningOp<arith::BitcastOp>();
  if (!cast || !isa<FloatType>(cast.getIn().getType()) ||
      !isa<IntegerType>(cast.getType()))
    return {};
  return cast.getIn();
}

/// shuffle(bitcast(f)) → bitcast(shuffle(f)): a lane exchange moves bits,
/// so it moves the float.
struct ShuffleOfFloatBits final : OpRewritePattern<gpu::ShuffleOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(gpu::ShuffleOp op,
                                PatternRewriter &rewriter) const override {
    Value f = floatOfBits(op.getValue());
    if (!f)
      return rewriter.notifyMatchFailure(op, "not a float's bits");
    Location loc = op.getLoc();
    auto shuffle = gpu::ShuffleOp::create(rewriter, loc, f, op.getOffset(),
                                          op.getWidth(), op.getMode());
    Value bits = arith::BitcastOp::create(rewriter, loc, op.getType(0),
                                          shuffle.getShuffleResult());
    rewriter.replaceOp(op, {bits, shuffle.getValid()});
    return success();
  }
};

/// select(c, bitcast(a), bitcast(b) or constant) → bitcast(select(c, a, b)).
struct SelectOfFloatBits final : OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::SelectOp op,
                                PatternRewriter &rewriter) const override {
    auto intType = dyn_cast<IntegerType>(op.getType());
    if (!intType)
      return rewriter.notifyMatchFailure(op, "not an integer select");
    Value t = floatOfBits(op.getTrueValue()),
          f = floatOfBits(op.getFalseValue());
    Type floatType = t ? t.getType() : f ? f.getType() : Type();
    if (!floatType || (t && f && t.getType() != f.getType()))
      return rewriter.notifyMatchFailure(op, "selects no float's bits");
    Location loc = op.getLoc();
    auto asFloat = [&](Value bits, Value known) -> Value {
      if (known)
        return known;
      APInt value;
      if (!matchPattern(bits, m_ConstantInt(&value)))
        return {};
      return arith::ConstantOp::create(
          rewriter, loc,
          FloatAttr::get(
              floatType,
              APFloat(cast<FloatType>(floatType).getFloatSemantics(), value)));
    };
    Value a = asFloat(op.getTrueValue(), t), b = asFloat(op.getFalseValue(), f);
    if (!a || !b)
      return rewriter.notifyMatchFailure(op, "an operand is other bits");
    Value select =
        arith::SelectOp::create(rewriter, loc, op.getCondition(), a, b);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, intType, select);
    return success();
  }
};

/// An scf.if result both branches yield as the bits of floats of one type
/// (a phi of shuffled and unshuffled bits in an arg-max reduction) becomes a
/// float result, reinterpreted after the if.
struct IfOfFloatBits final : OpRewritePattern<scf::IfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::IfOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumResults() == 0 || op.getElseRegion().empty())
      return rewriter.notifyMatchFailure(op, "no results");
    auto thenYield = cast<scf::YieldOp>(op.thenBlock()->getTerminator());
    auto elseYield = cast<scf::YieldOp>(op.elseBlock()->getTerminator());
    for (unsigned i = 0; i < op.getNumResults(); ++i) {
      Value t = floatOfBits(thenYield.getOperand(i)),
            e = floatOfBits(elseYield.getOperand(i));
      if (!t || !e || t.getType() != e.getType())
        continue;
      Value result = op.getResult(i);
      Type intType = result.getType();
      rewriter.modifyOpInPlace(op, [&] {
        thenYield.setOperand(i, t);
        elseYield.setOperand(i, e);
        result.setType(t.getType());
      });
      rewriter.setInsertionPointAfter(op);
      auto bits =
          arith::BitcastOp::create(rewriter, op.getLoc(), intType, result);
      rewriter.replaceAllUsesExcept(result, bits.getResult(), bits);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "yields no float's bits");
  }
};

/// The value `v` is (through zero extensions), or null if none.
Value throughZeroExtension(Value v, unsigned fromWidth) {
  auto ext = v.getDefiningOp<arith::ExtUIOp>();
  if (!ext || ext.getIn().getType().getIntOrFloatBitWidth() != fromWidth)
    return {};
  return ext.getIn();
}

/// bitcast(zext(shuffle(trunc(B))) | zext(shuffle(trunc(B >> 32))) << 32)
/// with B = bitcast(x), x a 64-bit float, and two identical shuffles → one
/// 64-bit shuffle of x: how CUDA's headers shuffle a double.
struct ShuffleOfSplitFloat final : OpRewritePattern<arith::BitcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::BitcastOp op,
                                PatternRewriter &rewriter) const override {
    auto floatType = dyn_cast<FloatType>(op.getType());
    if (!floatType || floatType.getWidth() != 64)
      return rewriter.notifyMatchFailure(op, "not a 64-bit float");
    auto join = op.getIn().getDefiningOp<arith::OrIOp>();
    if (!join)
      return rewriter.notifyMatchFailure(op, "not joined halves");
    for (auto [high, low] : {std::pair(join.getLhs(), join.getRhs()),
                             std::pair(join.getRhs(), join.getLhs())}) {
      auto shift = high.getDefiningOp<arith::ShLIOp>();
      APInt amount;
      if (!shift || !matchPattern(shift.getRhs(), m_ConstantInt(&amount)) ||
          amount != 32)
        continue;
      Value hi = throughZeroExtension(shift.getLhs(), 32),
            lo = throughZeroExtension(low, 32);
      auto hiShuffle = hi ? hi.getDefiningOp<gpu::ShuffleOp>() : nullptr;
      auto loShuffle = lo ? lo.getDefiningOp<gpu::ShuffleOp>() : nullptr;
      if (!hiShuffle || !loShuffle || hiShuffle.getShuffleResult() != hi ||
          loShuffle.getShuffleResult() != lo ||
          hiShuffle.getMode() != loShuffle.getMode() ||
          hiShuffle.getOffset() != loShuffle.getOffset() ||
          hiShuffle.getWidth() != loShuffle.getWidth())
        continue;
      // lo = trunc(B), hi = trunc(B >> 32), B = bitcast(x).
      auto loTrunc = loShuffle.getValue().getDefiningOp<arith::TruncIOp>();
      auto hiTrunc = hiShuffle.getValue().getDefiningOp<arith::TruncIOp>();
      if (!loTrunc || !hiTrunc)
        continue;
      auto hiShift = hiTrunc.getIn().getDefiningOp<arith::ShRUIOp>();
      if (!hiShift || !matchPattern(hiShift.getRhs(), m_ConstantInt(&amount)) ||
          amount != 32 || hiShift.getLhs() != loTrunc.getIn())
        continue;
      Value x = floatOfBits(loTrunc.getIn());
      if (!x || x.getType() != floatType)
        continue;
      auto shuffle = gpu::ShuffleOp::create(
          rewriter, op.getLoc(), x, loShuffle.getOffset(), loShuffle.getWidth(),
          loShuffle.getMode());
      rewriter.replaceOp(op, shuffle.getShuffleResult());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not two shuffled halves");
  }
};

/// bitcast(bits(x) & ~sign) → absf(x), bitcast(bits(x) ^ sign) → negf(x):
/// fabs and negation written on the bits.
struct SignMaskOfFloatBits final : OpRewritePattern<arith::BitcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::BitcastOp op,
                                PatternRewriter &rewriter) const override {
    auto floatType = dyn_cast<FloatType>(op.getType());
    Operation *mask = op.getIn().getDefiningOp();
    if (!floatType || !mask || !isa<arith::AndIOp, arith::XOrIOp>(mask))
      return rewriter.notifyMatchFailure(op, "not a mask of bits");
    unsigned width = floatType.getWidth();
    APInt sign = APInt::getSignMask(width);
    for (int k = 0; k < 2; ++k) {
      Value x = floatOfBits(mask->getOperand(k));
      APInt value;
      if (!x || x.getType() != floatType ||
          !matchPattern(mask->getOperand(1 - k), m_ConstantInt(&value)))
        continue;
      if (isa<arith::AndIOp>(mask) && value == ~sign) {
        rewriter.replaceOpWithNewOp<math::AbsFOp>(op, x);
        return success();
      }
      if (isa<arith::XOrIOp>(mask) && value == sign) {
        rewriter.replaceOpWithNewOp<arith::NegFOp>(op, x);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not a sign mask");
  }
};

} // namespace

void nabla::forwardFloatBits(func::FuncOp func) {
  bool any = func.walk([](arith::BitcastOp) { return WalkResult::interrupt(); })
                 .wasInterrupted();
  if (!any)
    return;
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(context);
  patterns.add<ShuffleOfFloatBits, SelectOfFloatBits, IfOfFloatBits,
               ShuffleOfSplitFloat, SignMaskOfFloatBits>(context);
  arith::BitcastOp::getCanonicalizationPatterns(patterns, context);
  (void)applyPatternsGreedily(func, std::move(patterns));
}

//===----------------------------------------------------------------------===//
// The check
//===----------------------------------------------------------------------===//

LogicalResult nabla::checkFloatBits(func::FuncOp func, const Activities &act) {
  // Bits of a differentiated float → the bitcast that took them.
  DenseMap<Value, Operation *> bits;
  SmallVector<Value> worklist;
  auto mark = [&](Value v, Operation *origin) {
    if (isa<IntegerType, VectorType>(v.getType()) &&
        bits.try_emplace(v, origin).second)
      worklist.push_back(v);
  };
  // Integers computed from a differentiated float by anything but a
  // piecewise-constant conversion carry (some of) its bits: bitcasts of any
  // dialect, vector bitcasts, ops Nabla does not know.
  func.walk([&](Operation *op) {
    // Integers read from differentiated memory may be a float's bits (an
    // object raised as bytes because it is also accessed as floats).
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && act.isShadowed(load.getMemRef()) &&
        !isFloatLike(load.getType())) {
      mark(load.getResult(), op);
      return;
    }
    if (isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp>(op) ||
        op->getNumRegions() || llvm::none_of(op->getOperands(), [&](Value v) {
          return act.isVaried(v);
        }))
      return;
    for (Value r : op->getResults())
      if (!isFloatLike(r.getType()) && !r.getType().isInteger(1) &&
          !isa<FloatType>(getElementTypeOrSelf(r.getType())))
        mark(r, op);
  });
  auto refuseWith = [&](Operation *user, Operation *origin,
                        const Twine &message) {
    InFlightDiagnostic diag = user->emitOpError() << message;
    diag.attachNote(origin->getLoc()) << "the float's bits are taken here";
    return diag;
  };
  auto refuse = [&](Operation *user, Operation *origin, StringRef what) {
    return refuseWith(
        user, origin,
        what + " an integer that carries a differentiated float's bits: the "
               "derivative cannot follow the bits through integer operations; "
               "move the float itself (shuffle, select or store the float, "
               "not its bits)");
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *origin = bits.lookup(v);
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      unsigned n = use.getOperandNumber();
      // Comparisons and the branch a select takes are piecewise constant.
      if (isa<arith::CmpIOp>(user) || (isa<arith::SelectOp>(user) && n == 0))
        continue;
      if (isa<memref::LoadOp>(user) || (isa<memref::StoreOp>(user) && n >= 2) ||
          (isa<memref::AtomicRMWOp>(user) && n >= 2))
        continue; // an index
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        if (isa<scf::IfOp, scf::ForOp, scf::WhileOp>(parent) &&
            n < parent->getNumResults())
          mark(parent->getResult(n), origin);
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          mark(loop.getRegionIterArgs()[n], origin);
        if (auto loop = dyn_cast<scf::WhileOp>(parent))
          mark(loop.getBeforeArguments()[n], origin);
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(user)) {
        if (n >= loop.getNumControlOperands()) {
          unsigned i = n - loop.getNumControlOperands();
          mark(loop.getRegionIterArgs()[i], origin);
          mark(loop.getResult(i), origin);
        }
        continue;
      }
      if (auto loop = dyn_cast<scf::WhileOp>(user)) {
        mark(loop.getBeforeArguments()[n], origin);
        continue;
      }
      if (auto condition = dyn_cast<scf::ConditionOp>(user)) {
        if (n == 0)
          continue;
        auto loop = cast<scf::WhileOp>(user->getParentOp());
        mark(loop.getAfterArguments()[n - 1], origin);
        mark(loop.getResult(n - 1), origin);
        continue;
      }
      // Integers read from memory (an int buffer, or bytes of an object
      // also accessed as floats) are data in their own right: converting,
      // storing or passing them on is fine; only reinterpreting them as a
      // float would make a float whose derivative is lost.
      bool fromMemory = isa<memref::LoadOp>(origin);
      if (fromMemory) {
        if (isa<arith::BitcastOp>(user) &&
            isa<FloatType>(getElementTypeOrSelf(user->getResult(0).getType())))
          return refuse(user, origin, "makes a float of");
        if (user->getNumRegions() || user->getNumResults() == 0 ||
            llvm::any_of(user->getResultTypes(), [](Type t) {
              return isa<FloatType>(getElementTypeOrSelf(t));
            }))
          continue;
        for (Value r : user->getResults())
          if (!r.getType().isInteger(1))
            mark(r, origin);
        continue;
      }
      if (auto rmw = dyn_cast<memref::AtomicRMWOp>(user);
          rmw && rmw.getKind() == arith::AtomicRMWKind::assign) {
        // CUDA's atomicExch on floats exchanges their bits.
        return refuseWith(
            user, origin,
            "exchanges a differentiated float atomically (atomicExch): the "
            "value each thread gets back depends on the order the threads "
            "ran in, which the reverse sweep cannot replay; store the float, "
            "or keep the exchanged values inactive");
      }
      if (isa<memref::StoreOp, memref::AtomicRMWOp>(user))
        return refuse(user, origin, "writes to memory");
      bool floatResult = llvm::any_of(user->getResultTypes(), [](Type t) {
        return isFloatLike(t) || isa<FloatType>(getElementTypeOrSelf(t));
      });
      if (floatResult)
        return refuse(user, origin, "makes a float of");
      if (user->getNumRegions() || user->getNumResults() == 0) {
        if (!isMemoryEffectFree(user) && !isa<gpu::PrintfOp>(user))
          return refuse(user, origin, "passes on");
        continue;
      }
      for (Value r : user->getResults())
        if (!r.getType().isInteger(1))
          mark(r, origin);
    }
  }
  return success();
}
