//===- LowerSubgroupBarrier.cpp - __syncwarp for NVVM and AMDGPU ----------===//
//
// `nabla.subgroup_barrier` (CUDA's `__syncwarp()`, raised from
// `llvm.nvvm.bar.warp.sync`) becomes the target's warp barrier before the
// GPU-to-LLVM conversions: `nvvm.bar.warp.sync` with a full mask, or on
// AMDGPU, whose wavefronts execute in lockstep, HIP's own `__syncwarp`: a
// wave barrier between wavefront-scope release and acquire fences.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Support/OptionNames.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERSUBGROUPBARRIER
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {
struct LowerSubgroupBarrier
    : public nabla::SuggestOptionNames<
          nabla::impl::LowerSubgroupBarrierBase<LowerSubgroupBarrier>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    if (target != "nvvm" && target != "rocdl") {
      getOperation().emitError("unknown target '")
          << target << "' for nabla-lower-subgroup-barrier (expected nvvm or "
                       "rocdl)";
      return signalPassFailure();
    }
    SmallVector<nabla::SubgroupBarrierOp> barriers;
    getOperation().walk(
        [&](nabla::SubgroupBarrierOp op) { barriers.push_back(op); });
    for (nabla::SubgroupBarrierOp barrier : barriers) {
      OpBuilder b(barrier);
      Location loc = barrier.getLoc();
      if (target == "nvvm") {
        Value all = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                             b.getI32IntegerAttr(-1));
        NVVM::SyncWarpOp::create(b, loc, all);
      } else {
        LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::release,
                              "wavefront");
        LLVM::CallIntrinsicOp::create(
            b, loc, b.getStringAttr("llvm.amdgcn.wave.barrier"), ValueRange());
        LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acquire,
                              "wavefront");
      }
      barrier.erase();
    }
    SmallVector<nabla::MemoryFenceOp> fences;
    getOperation().walk([&](nabla::MemoryFenceOp op) { fences.push_back(op); });
    for (nabla::MemoryFenceOp fence : fences) {
      OpBuilder b(fence);
      StringRef scope = fence.getScope();
      if (target == "nvvm") {
        NVVM::MemScopeKind kind = scope == "workgroup" ? NVVM::MemScopeKind::CTA
                                  : scope == "device"  ? NVVM::MemScopeKind::GPU
                                                       : NVVM::MemScopeKind::SYS;
        NVVM::MembarOp::create(b, fence.getLoc(), kind);
      } else {
        StringRef syncscope = scope == "workgroup" ? "workgroup"
                              : scope == "device"  ? "agent"
                                                   : "";
        LLVM::FenceOp::create(b, fence.getLoc(),
                              LLVM::AtomicOrdering::seq_cst, syncscope);
      }
      fence.erase();
    }
  }
};
} // namespace
