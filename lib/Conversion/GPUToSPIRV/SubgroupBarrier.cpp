//===- SubgroupBarrier.cpp - __syncwarp and __threadfence to SPIR-V -------===//
//
// `nabla.subgroup_barrier` synchronizes a CUDA warp: 32 lanes of consecutive
// linear thread ids. On a device whose subgroups hold 32 lanes or more it
// becomes OpControlBarrier at Subgroup execution and memory scope,
// acquire-release on workgroup and storage-buffer memory (SPIRV-Cross writes
// Metal's `simdgroup_barrier`). A narrower subgroup (lavapipe: 8) holds only
// part of a warp, and Vulkan offers nothing between a subgroup and the
// workgroup: the barrier is then the workgroup's, as for the 32-wide shuffles
// exchanged through workgroup memory (WideShuffles.cpp), and the block's
// every thread must reach it.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"

using namespace mlir;

namespace {

/// Both ops order workgroup and storage-buffer memory, acquire-release.
spirv::MemorySemantics getOrderingSemantics() {
  return spirv::MemorySemantics::AcquireRelease |
         spirv::MemorySemantics::WorkgroupMemory |
         spirv::MemorySemantics::UniformMemory;
}

struct SubgroupBarrierToSPIRV final
    : OpConversionPattern<nabla::SubgroupBarrierOp> {
  SubgroupBarrierToSPIRV(const TypeConverter &typeConverter,
                         MLIRContext *context, unsigned subgroupSize)
      : OpConversionPattern(typeConverter, context),
        subgroupSize(subgroupSize) {}

  LogicalResult
  matchAndRewrite(nabla::SubgroupBarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    spirv::MemorySemantics semantics = getOrderingSemantics();
    spirv::Scope scope = subgroupSize >= kWarpSize ? spirv::Scope::Subgroup
                                                   : spirv::Scope::Workgroup;
    rewriter.replaceOpWithNewOp<spirv::ControlBarrierOp>(op, scope, scope,
                                                         semantics);
    return success();
  }

  static constexpr unsigned kWarpSize = 32;
  unsigned subgroupSize;
};

/// __threadfence*: OpMemoryBarrier at the fence's scope.
struct MemoryFenceToSPIRV final : OpConversionPattern<nabla::MemoryFenceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(nabla::MemoryFenceOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    spirv::MemorySemantics semantics = getOrderingSemantics();
    StringRef name = op.getScope();
    spirv::Scope scope = name == "workgroup" ? spirv::Scope::Workgroup
                         : name == "device"  ? spirv::Scope::Device
                                             : spirv::Scope::CrossDevice;
    rewriter.replaceOpWithNewOp<spirv::MemoryBarrierOp>(op, scope, semantics);
    return success();
  }
};

} // namespace

void nabla::populateSubgroupBarrierToSPIRVPatterns(
    const SPIRVTypeConverter &typeConverter, RewritePatternSet &patterns,
    unsigned subgroupSize) {
  patterns.add<SubgroupBarrierToSPIRV>(typeConverter, patterns.getContext(),
                                       subgroupSize);
  patterns.add<MemoryFenceToSPIRV>(typeConverter, patterns.getContext());
}
