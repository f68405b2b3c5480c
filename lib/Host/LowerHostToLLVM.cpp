//===- LowerHostToLLVM.cpp - Host code to LLVM calling mgpu* --------------===//
//
// The host half of every `nabla-to-*` pipeline. It runs after the kernels
// became gpu.binary ops and lowers the rest of the module with upstream's
// conversions, in the order upstream's GPU integration tests use them:
// gpu-async-region puts every GPU op on a stream (gpu-to-llvm lowers
// allocations, copies and memsets only in their asynchronous form), then
// gpu-to-llvm, then the async runtime, then everything else to the LLVM
// dialect. Modules without GPU host code are left alone, so kernel-only
// inputs produce exactly what they did before host lowering existed.
//
//===----------------------------------------------------------------------===//

#include "nabla/Host/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Async/IR/Async.h"
#include "mlir/Dialect/Async/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERHOSTTOLLVM
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

bool nabla::hasGPUHostCode(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (isa<gpu::GPUModuleOp, gpu::BinaryOp>(op))
      return WalkResult::skip();
    if (isa<gpu::GPUDialect>(op->getDialect())) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

namespace {

bool hasAsyncOps(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (isa<gpu::GPUModuleOp, gpu::BinaryOp>(op))
      return WalkResult::skip();
    if (isa<async::AsyncDialect>(op->getDialect())) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

struct LowerHostToLLVM
    : public nabla::impl::LowerHostToLLVMBase<LowerHostToLLVM> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, async::AsyncDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!nabla::hasGPUHostCode(module))
      return;
    if (target != "nvvm" && target != "rocdl" && target != "spirv" &&
        target != "metal") {
      module.emitError("unknown host lowering target '")
          << target << "' (expected nvvm, rocdl, spirv or metal)";
      return signalPassFailure();
    }
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      gpuModule.emitError("was not compiled to a gpu.binary before the host "
                          "code that launches it was lowered");
      return signalPassFailure();
    }

    OpPassManager pm(ModuleOp::getOperationName());
    if (target == "spirv")
      pm.addPass(nabla::createWrapHostObjects());
    pm.addPass(createLowerAffinePass());
    pm.addPass(memref::createExpandStridedMetadataPass());
    pm.addPass(createSCFToControlFlowPass());
    pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
    pm.addPass(createGpuToLLVMConversionPass());
    if (hasAsyncOps(module)) {
      pm.addPass(createAsyncToAsyncRuntimePass());
      pm.addPass(createAsyncRuntimeRefCountingPass());
      pm.addPass(createAsyncRuntimeRefCountingOptPass());
      pm.addPass(createConvertAsyncToLLVMPass());
    }
    pm.addPass(createConvertToLLVMPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
  }
};

} // namespace
