//===- NarrowComparisons.cpp - Compare sign-extended values narrowly ------===//
//
// `arith.cmpi pred, (arith.extsi %x : iN to iM), C` with a constant C that
// fits in a signed iN is `arith.cmpi pred, %x, trunc(C)`: sign extension
// preserves both the signed and the unsigned order, so every predicate
// carries over. The narrow form is cheaper, and it avoids a lavapipe (Mesa
// 22.3.6) miscompile: OpSLessThan of an OpSConvert'ed i32 against an i64
// constant evaluates to false for negative values (found while writing the
// fpowi expansion; the same comparison against a loaded value is right).
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {
struct NarrowSignExtendedComparison : public OpRewritePattern<arith::CmpIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::CmpIOp op,
                                PatternRewriter &rewriter) const override {
    for (bool extendedOnLeft : {true, false}) {
      Value extendedSide = extendedOnLeft ? op.getLhs() : op.getRhs();
      Value constantSide = extendedOnLeft ? op.getRhs() : op.getLhs();
      auto extend = extendedSide.getDefiningOp<arith::ExtSIOp>();
      APInt constant;
      if (!extend || !matchPattern(constantSide, m_ConstantInt(&constant)))
        continue;
      auto narrow = dyn_cast<IntegerType>(extend.getIn().getType());
      if (!narrow || !constant.isSignedIntN(narrow.getWidth()))
        continue;
      Value narrowConstant = arith::ConstantOp::create(
          rewriter, op.getLoc(),
          rewriter.getIntegerAttr(narrow, constant.trunc(narrow.getWidth())));
      Value lhs = extendedOnLeft ? extend.getIn() : narrowConstant;
      Value rhs = extendedOnLeft ? narrowConstant : extend.getIn();
      rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, op.getPredicate(), lhs,
                                                 rhs);
      return success();
    }
    return failure();
  }
};
} // namespace

void nabla::populateNarrowComparisonPatterns(RewritePatternSet &patterns) {
  patterns.add<NarrowSignExtendedComparison>(patterns.getContext());
}
