//===- PowerBySquaring.cpp - math.fpowi with a run-time exponent ----------===//
//
// GLSL.std.450 has no x^n for an integer n, and its Pow is 32-bit and
// undefined for x < 0. Upstream expands `math.fpowi` only for a constant
// exponent; with an exponent known at run time the op reached
// `spirv.GL.Pow`, invalid on f64 (found by difftest, seed 20003; the
// reverse mode of x^c needs x^(c-1) with c-1 computed at run time too) and
// NaN for a negative base on f32. Here a scalar fpowi becomes a loop of
// binary exponentiation, the algorithm of compiler-rt's __powidf2 that the
// CPU back ends call, so results agree with them bit for bit (constant
// exponents keep upstream's straight-line expansion):
//
//   r = 1; e = |n|
//   loop { if (e & 1) r *= x;  e >>= 1;  if (e == 0) break;  x *= x }
//   result = n < 0 ? 1 / r : r
//
// |n| is read as an unsigned number of n's width w (|INT_MIN| = 2^(w-1)
// fits): at most w iterations.
// Vector fpowi keeps upstream's lowering.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {
struct ExpandFPowI : public OpRewritePattern<math::FPowIOp> {
  /// Ahead of upstream's expansion, which turns a non-constant exponent into
  /// math.powf (GL.Pow).
  ExpandFPowI(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::FPowIOp op,
                                PatternRewriter &rewriter) const override {
    auto floatType = dyn_cast<FloatType>(op.getType());
    // Constant exponents: upstream's expansion (straight-line products).
    if (!floatType || !isa<IntegerType>(op.getRhs().getType()) ||
        matchPattern(op.getRhs(), m_Constant()))
      return failure();
    Location loc = op.getLoc();
    // |n| in n's own type, read as unsigned: |INT_MIN| = 2^(w-1) fits.
    Value n = op.getRhs();
    Type intType = n.getType();
    Value zero = arith::ConstantIntOp::create(rewriter, loc, intType, 0);
    Value one = arith::ConstantIntOp::create(rewriter, loc, intType, 1);
    Value negative = arith::CmpIOp::create(rewriter, loc,
                                           arith::CmpIPredicate::slt, n, zero);
    Value magnitude = arith::SelectOp::create(
        rewriter, loc, negative, arith::SubIOp::create(rewriter, loc, zero, n),
        n);
    Value unit = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getFloatAttr(floatType, 1));

    // scf.while (r, x, e): the body multiplies when e is odd, shifts e and
    // squares x; the condition stops once e is zero (r is final then). The
    // first test of `e != 0` before any multiplication makes n = 0 give 1.
    SmallVector<Type> types = {floatType, floatType, intType};
    SmallVector<Location> locs(3, loc);
    auto loop = scf::WhileOp::create(rewriter, loc, types,
                                     ValueRange{unit, op.getLhs(), magnitude});
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *before = rewriter.createBlock(&loop.getBefore(), {}, types, locs);
      Value more =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                before->getArgument(2), zero);
      scf::ConditionOp::create(rewriter, loc, more, before->getArguments());
      Block *after = rewriter.createBlock(&loop.getAfter(), {}, types, locs);
      Value r = after->getArgument(0), x = after->getArgument(1),
            e = after->getArgument(2);
      Value odd = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(rewriter, loc, e, one), zero);
      r = arith::SelectOp::create(
          rewriter, loc, odd, arith::MulFOp::create(rewriter, loc, r, x), r);
      e = arith::ShRUIOp::create(rewriter, loc, e, one);
      // Squared only when another step follows, as __powidf2 does: an extra
      // square could overflow to inf and is never used anyway.
      Value again = arith::CmpIOp::create(rewriter, loc,
                                          arith::CmpIPredicate::ne, e, zero);
      x = arith::SelectOp::create(
          rewriter, loc, again, arith::MulFOp::create(rewriter, loc, x, x), x);
      scf::YieldOp::create(rewriter, loc, ValueRange{r, x, e});
    }
    Value power = loop.getResult(0);
    Value reciprocal = arith::DivFOp::create(rewriter, loc, unit, power);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, reciprocal,
                                                 power);
    return success();
  }
};
} // namespace

void nabla::populateExpandFPowIPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandFPowI>(patterns.getContext());
}
