//===- SignedRemainder.cpp - arith.remsi exact for the minimum value ------===//
//
// Upstream's arith-to-SPIR-V lowering computes `remsi a, b` as
// UMod(SAbs(a), SAbs(b)) with the sign of a, testing a's sign as
// `a == SAbs(a)`. For a = INT_MIN, SAbs(a) wraps to a itself, the test says
// "non-negative" and the result has the wrong sign: INT_MIN rem 15 gave 8
// instead of -8 on lavapipe (found by difftest, seed 61275). Here remsi on
// integers becomes
//
//   m = remui(absi(a), absi(b));  a < 0 ? 0 - m : m
//
// where absi(INT_MIN) = INT_MIN read as unsigned is 2^(w-1), the right
// magnitude, and the sign comes from a comparison. Index remainders keep
// upstream's lowering (SPIR-V's 32-bit index values are not negative here).
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace {
struct ExactSignedRemainder : public OpRewritePattern<arith::RemSIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::RemSIOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isa<IntegerType>(getElementTypeOrSelf(type)))
      return failure();
    Location loc = op.getLoc();
    Value zero = arith::ConstantOp::create(rewriter, loc, type,
                                           rewriter.getZeroAttr(type));
    Value magnitude = arith::RemUIOp::create(
        rewriter, loc, math::AbsIOp::create(rewriter, loc, op.getLhs()),
        math::AbsIOp::create(rewriter, loc, op.getRhs()));
    Value negative = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, op.getLhs(), zero);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(
        op, negative, arith::SubIOp::create(rewriter, loc, zero, magnitude),
        magnitude);
    return success();
  }
};
} // namespace

void nabla::populateExactSignedRemainderPatterns(RewritePatternSet &patterns) {
  patterns.add<ExactSignedRemainder>(patterns.getContext());
}
