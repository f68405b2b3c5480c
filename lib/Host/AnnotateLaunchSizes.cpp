//===- AnnotateLaunchSizes.cpp - Kernel sizes from their launches ---------===//
//
// A kernel launched only with constant sizes, the same at every launch, can
// be compiled for them: SPIR-V needs its workgroup size at compile time, and
// every target folds gpu.block_dim / gpu.grid_dim into constants. The same
// for the dynamic shared memory size (`nabla.dynamic_shared_memory`), which
// SPIR-V and Metal compile in. Kernels launched with run-time or differing
// sizes, and kernels nothing launches, keep what they have.
//
//===----------------------------------------------------------------------===//

#include "nabla/Host/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/InterleavedRange.h"

namespace nabla {
#define GEN_PASS_DEF_ANNOTATELAUNCHSIZES
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// The bytes of dynamic shared memory every launch of the kernel passes.
constexpr StringLiteral kDynamicSharedAttrName = "nabla.dynamic_shared_memory";

/// What the launches of one kernel agree on.
struct LaunchSizes {
  /// Unset until the first launch; cleared on a run-time or differing size.
  std::optional<SmallVector<int32_t, 3>> block, grid;
  bool blockVaries = false, gridVaries = false;
  /// The dynamic shared memory bytes (0 when a launch passes none).
  std::optional<int64_t> dynamicShared;
  bool dynamicSharedVaries = false;
  /// A launch with a constant block size, for diagnostics.
  gpu::LaunchFuncOp constantLaunch;
};

/// The three sizes as constants, or std::nullopt if one is not constant or
/// does not fit a 32-bit extent.
std::optional<SmallVector<int32_t, 3>> constantSizes(gpu::KernelDim3 dims) {
  SmallVector<int32_t, 3> sizes;
  for (Value value : {dims.x, dims.y, dims.z}) {
    APInt constant;
    if (!matchPattern(value, m_ConstantInt(&constant)) ||
        constant.isNegative() || constant.getActiveBits() > 31)
      return std::nullopt;
    sizes.push_back(static_cast<int32_t>(constant.getSExtValue()));
  }
  return sizes;
}

/// Merges one launch's sizes into what earlier launches agreed on.
void merge(std::optional<SmallVector<int32_t, 3>> sizes,
           std::optional<SmallVector<int32_t, 3>> &agreed, bool &varies,
           bool first) {
  if (varies)
    return;
  if (!sizes || (!first && agreed && *agreed != *sizes)) {
    varies = true;
    agreed.reset();
    return;
  }
  agreed = sizes;
}

struct AnnotateLaunchSizes
    : public nabla::impl::AnnotateLaunchSizesBase<AnnotateLaunchSizes> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::MapVector<Operation *, LaunchSizes> kernels;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel || !kernel.isKernel())
        return;
      bool first = !kernels.count(kernel);
      LaunchSizes &sizes = kernels[kernel];
      std::optional<SmallVector<int32_t, 3>> block =
          constantSizes(launch.getBlockSizeOperandValues());
      if (block && !sizes.constantLaunch)
        sizes.constantLaunch = launch;
      merge(block, sizes.block, sizes.blockVaries, first);
      merge(constantSizes(launch.getGridSizeOperandValues()), sizes.grid,
            sizes.gridVaries, first);
      std::optional<int64_t> bytes = 0;
      if (Value size = launch.getDynamicSharedMemorySize()) {
        APInt constant;
        bytes = matchPattern(size, m_ConstantInt(&constant)) &&
                        !constant.isNegative()
                    ? std::optional<int64_t>(constant.getSExtValue())
                    : std::nullopt;
      }
      if (!sizes.dynamicSharedVaries) {
        if (!bytes || (!first && sizes.dynamicShared != bytes)) {
          sizes.dynamicSharedVaries = true;
          sizes.dynamicShared.reset();
        } else {
          sizes.dynamicShared = bytes;
        }
      }
    });

    for (auto &[op, sizes] : kernels) {
      auto kernel = cast<gpu::GPUFuncOp>(op);
      if (sizes.block) {
        if (std::optional<ArrayRef<int32_t>> known =
                kernel.getKnownBlockSize()) {
          if (*known != ArrayRef<int32_t>(*sizes.block)) {
            InFlightDiagnostic diag =
                sizes.constantLaunch.emitOpError("launches kernel @");
            diag << kernel.getName() << " with block size "
                 << llvm::interleaved(*sizes.block)
                 << ", but the kernel declares known_block_size "
                 << llvm::interleaved(*known);
            diag.attachNote(kernel.getLoc()) << "kernel declared here";
            return signalPassFailure();
          }
        } else {
          kernel.setKnownBlockSizeAttr(
              DenseI32ArrayAttr::get(&getContext(), *sizes.block));
        }
      }
      if (sizes.grid && !kernel.getKnownGridSize())
        kernel.setKnownGridSizeAttr(
            DenseI32ArrayAttr::get(&getContext(), *sizes.grid));
      // Only for a kernel that views dynamic shared memory itself.
      bool viewsDynamicShared =
          kernel
              .walk([](gpu::DynamicSharedMemoryOp) {
                return WalkResult::interrupt();
              })
              .wasInterrupted();
      if (sizes.dynamicShared && viewsDynamicShared)
        kernel->setAttr(
            kDynamicSharedAttrName,
            IntegerAttr::get(IntegerType::get(&getContext(), 64),
                             *sizes.dynamicShared));
    }
  }
};

} // namespace
