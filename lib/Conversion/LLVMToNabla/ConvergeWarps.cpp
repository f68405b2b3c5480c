//===- ConvergeWarps.cpp - Every lane at warp ops over partial masks ------===//
//
// CUDA's warp operations over a partial mask name the lanes that execute
// them: reduce7's `mask = __ballot_sync(~0u, tid < n); if (tid < n) v =
// __reduce_add_sync(mask, v);`, a shuffle inside such a branch,
// `__activemask()` in warp-aggregated atomics. The raise emulates them with
// butterflies of 32-wide shuffles in which a lane outside the mask
// contributes the operation's identity (WarpCollectives.cpp): exact when
// every lane of the warp runs the butterfly, which a native 32-lane shuffle
// with a full mask (NVVM) and the workgroup-memory exchange of narrower
// subgroups (SPIR-V, Metal) both need. The branches around them are
// if-converted (nabla/Transforms/ConvergentBranches.h);
// `nabla.active_lanes` becomes a ballot of the predicate it runs under (at
// a function's top level, of true: the warp's threads).
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Transforms/ConvergentBranches.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace nabla::raise;

static bool isPartialWarpOp(Operation *op) {
  return isa<nabla::ActiveLanesOp>(op) ||
         (isa<gpu::ShuffleOp, nabla::SubgroupBarrierOp>(op) &&
          op->hasAttr(kPartialMaskAttrName));
}

LogicalResult nabla::raise::convergeWarps(Operation *root) {
  nabla::ConvergenceOptions options;
  options.mustReach = isPartialWarpOp;
  options.activeLanes = [](Operation *op) {
    return isa<nabla::ActiveLanesOp>(op);
  };
  options.ballot = [](OpBuilder &b, Location loc, Value predicate) {
    return buildWarpBallot(b, loc, predicate, /*partialMask=*/false);
  };
  options.who = "lane of the warp";
  options.what = "warp operation over a partial mask (or __activemask)";
  if (failed(nabla::convergeBranches(root, options)))
    return failure();
  // What is left runs where every thread of the warp does.
  SmallVector<nabla::ActiveLanesOp> active;
  root->walk([&](nabla::ActiveLanesOp op) { active.push_back(op); });
  for (nabla::ActiveLanesOp op : active) {
    OpBuilder builder(op);
    Value all = arith::ConstantIntOp::create(builder, op.getLoc(),
                                             builder.getI1Type(), 1);
    op.replaceAllUsesWith(buildWarpBallot(builder, op.getLoc(), all,
                                          /*partialMask=*/false));
    op.erase();
  }
  // The marks served their purpose.
  root->walk([](Operation *op) { op->removeAttr(kPartialMaskAttrName); });
  return success();
}
