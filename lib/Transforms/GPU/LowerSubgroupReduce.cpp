//===- LowerSubgroupReduce.cpp - Subgroup reductions to shuffles ----------===//
//
// Wraps upstream's subgroup-reduce rewrite patterns (which upstream only
// exposes through test passes) as a pipeline pass with the target's
// subgroup size, plus a 64-bit scalar reduction (a butterfly of paired
// 32-bit xor shuffles, which upstream's patterns do not cover).
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/OptionNames.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERSUBGROUPREDUCE
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// A 64-bit scalar subgroup reduction as log2(size) xor-butterfly steps,
/// each shuffling the value's two 32-bit halves: every lane combines the same
/// operands in the same order.
struct LowerWideSubgroupReduce : OpRewritePattern<gpu::SubgroupReduceOp> {
  LowerWideSubgroupReduce(MLIRContext *context, unsigned subgroupSize)
      : OpRewritePattern(context), subgroupSize(subgroupSize) {}

  LogicalResult matchAndRewrite(gpu::SubgroupReduceOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() != 64 ||
        op.getClusterSize())
      return failure();
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    Value shift = arith::ConstantIntOp::create(rewriter, loc, i64, 32);
    vector::CombiningKind kind = gpu::convertReductionKind(op.getOp());
    Value value = op.getValue();
    for (unsigned offset = 1; offset < subgroupSize; offset <<= 1) {
      Value bits = arith::BitcastOp::create(rewriter, loc, i64, value);
      Value halves[2] = {
          arith::TruncIOp::create(rewriter, loc, i32, bits),
          arith::TruncIOp::create(
              rewriter, loc, i32,
              arith::ShRUIOp::create(rewriter, loc, bits, shift))};
      for (Value &half : halves)
        half = arith::ExtUIOp::create(
            rewriter, loc, i64,
            gpu::ShuffleOp::create(rewriter, loc, half, offset, subgroupSize,
                                   gpu::ShuffleMode::XOR)
                .getShuffleResult());
      Value other = arith::BitcastOp::create(
          rewriter, loc, type,
          arith::OrIOp::create(
              rewriter, loc, halves[0],
              arith::ShLIOp::create(rewriter, loc, halves[1], shift)));
      value = vector::makeArithReduction(rewriter, loc, kind, value, other);
    }
    rewriter.replaceOp(op, value);
    return success();
  }

  unsigned subgroupSize;
};

struct LowerSubgroupReduce
    : public nabla::SuggestOptionNames<
          nabla::impl::LowerSubgroupReduceBase<LowerSubgroupReduce>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    // The subgroup size is a constant of the target (NVVM has no lowering
    // for gpu.subgroup_size).
    getOperation().walk([&](gpu::SubgroupSizeOp op) {
      OpBuilder builder(op);
      op.replaceAllUsesWith(
          arith::ConstantIndexOp::create(builder, op.getLoc(), subgroupSize)
              .getResult());
      op.erase();
    });

    RewritePatternSet patterns(&getContext());
    patterns.add<LowerWideSubgroupReduce>(&getContext(), subgroupSize);
    populateGpuBreakDownSubgroupReducePatterns(patterns,
                                               /*maxShuffleBitwidth=*/32);
    populateGpuLowerSubgroupReduceToShufflePatterns(patterns, subgroupSize,
                                                    /*shuffleBitwidth=*/32);
    populateGpuLowerClusteredSubgroupReduceToShufflePatterns(
        patterns, subgroupSize, /*shuffleBitwidth=*/32);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
