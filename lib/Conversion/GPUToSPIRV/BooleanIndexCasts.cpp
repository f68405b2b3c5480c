//===- BooleanIndexCasts.cpp - i1 to index casts for SPIR-V ---------------===//
//
// SPIR-V's booleans are not integers: upstream lowers no `arith.index_castui`
// (or `index_cast`) of an i1, which clang's -O1 code has after lifting loops
// with several exits (the exit taken, as an index; found by
// scripts/fuzz_cuda_cfg.py as "failed to legalize operation
// 'arith.index_castui'"). They become selects between index constants: 1 or
// 0 unsigned, -1 or 0 signed.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {

/// index_cast[ui] %b : i1 to index → select(%b, -1 or 1, 0).
template <typename CastOp, int64_t TrueValue>
struct BooleanToIndex final : OpRewritePattern<CastOp> {
  using OpRewritePattern<CastOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getIn().getType().isInteger(1) || !op.getType().isIndex())
      return rewriter.notifyMatchFailure(op, "not an i1 to index cast");
    Location loc = op.getLoc();
    Value taken = arith::ConstantIndexOp::create(rewriter, loc, TrueValue);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, op.getIn(), taken, zero);
    return success();
  }
};

} // namespace

void nabla::populateBooleanIndexCastPatterns(RewritePatternSet &patterns) {
  patterns.add<BooleanToIndex<arith::IndexCastUIOp, 1>,
               BooleanToIndex<arith::IndexCastOp, -1>>(patterns.getContext());
}
