//===- LowerSubgroupReduce.cpp - Subgroup reductions to shuffles ----------===//
//
// Wraps upstream's subgroup-reduce rewrite patterns (which upstream only
// exposes through test passes) as a pipeline pass with the target's
// subgroup size.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERSUBGROUPREDUCE
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

struct LowerSubgroupReduce
    : public nabla::impl::LowerSubgroupReduceBase<LowerSubgroupReduce> {
  using Base::Base;

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
