//===- SPIRVPipeline.cpp - The nabla-to-spirv and nabla-to-metal pipelines ===//
//
// Target check, inlining of device calls (SPIR-V for Vulkan has no calling
// convention for memrefs), alias folding, Nabla's GPU-to-SPIR-V conversion,
// ABI lowering and capability deduction, then serialization with in-process
// validation. Metal is the same path with SPIRV-Cross producing MSL at the
// end.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/Passes.h"
#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Host/Passes.h"
#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// Threads per workgroup of the entry points (1024 at most when not given).
static unsigned workgroupThreads(ArrayRef<int64_t> workgroupSize) {
  if (workgroupSize.empty())
    return 1024;
  unsigned threads = 1;
  for (int64_t size : workgroupSize)
    threads *= size;
  return threads;
}

/// The shared SPIR-V lowering for `client` (vulkan or metal).
static void buildSPIRVLowering(OpPassManager &pm, StringRef target,
                               StringRef abi, StringRef relocStrategy,
                               ArrayRef<int64_t> workgroupSize,
                               unsigned subgroupSize, bool emulateFloatAtomics,
                               int64_t dynamicSharedMemory, int optLevel,
                               StringRef client, int64_t loopLimit) {
  nabla::addFrontendPasses(pm, target, "", abi, relocStrategy, "",
                           workgroupSize);
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  // Structured control flow first: a multi-block device function cannot be
  // inlined into an scf region, and SPIR-V wants structured control flow.
  device.addPass(createLiftControlFlowToSCFPass());
  device.addPass(nabla::createInlineDeviceCalls());
  // Neither Vulkan nor Metal has bf16: f32 arithmetic, i16 storage.
  device.addPass(nabla::createEmulateBFloat16());
  device.addPass(nabla::createExpandAtomics());
  device.addPass(
      nabla::createLowerAllReduce({subgroupSize, /*subgroupBuiltins=*/true,
                                   workgroupThreads(workgroupSize)}));
  device.addPass(nabla::createLinearizeKernelMemRefs());
  // After the size parameters: then the module globals' buffers, then the
  // printf buffer, the last binding.
  device.addPass(nabla::createBindModuleGlobals());
  if (client == "vulkan") {
    // Before the printf buffer: its report is a gpu.printf.
    if (loopLimit > 0)
      device.addPass(nabla::createDetectLoopLimit(
          {static_cast<int64_t>(workgroupThreads(workgroupSize)), loopLimit}));
    device.addPass(nabla::createLowerPrintfToBuffer());
  }
  device.addPass(memref::createFoldMemRefAliasOpsPass());
  device.addPass(createLowerAffinePass());
  // Ceil/floor divisions in terms of ops the SPIR-V conversion has patterns
  // for (found by difftest: "failed to legalize").
  device.addPass(arith::createArithExpandOpsPass());
  // opt-level 0 keeps the kernels' own operations (for debugging the
  // lowering); 1 simplifies before conversion; 2+ also the SPIR-V.
  if (optLevel >= 1) {
    device.addPass(createCanonicalizerPass());
    device.addPass(createCSEPass());
  }

  nabla::ConvertGPUToSPIRVOptions convert;
  convert.workgroupSize.assign(workgroupSize.begin(), workgroupSize.end());
  convert.client = client.str();
  convert.subgroupSize = subgroupSize;
  convert.emulateFloatAtomics = emulateFloatAtomics;
  convert.dynamicSharedMemory = dynamicSharedMemory;
  pm.addPass(nabla::createConvertGPUToSPIRV(convert));

  OpPassManager &spirvModule =
      pm.nest<gpu::GPUModuleOp>().nest<spirv::ModuleOp>();
  if (optLevel >= 2) {
    spirvModule.addPass(createCanonicalizerPass());
    spirvModule.addPass(createCSEPass());
  }
  spirvModule.addPass(spirv::createSPIRVLowerABIAttributesPass());
  spirvModule.addPass(spirv::createSPIRVUpdateVCEPass());
}

void nabla::buildNablaToSPIRVPipeline(OpPassManager &pm,
                                      const NablaToSPIRVOptions &options) {
  buildSPIRVLowering(pm, "spirv", options.abi, options.relocStrategy,
                     options.workgroupSize, options.subgroupSize,
                     options.emulateFloatAtomics, options.dynamicSharedMemory,
                     options.optLevel, "vulkan", options.loopLimit);
  pm.addPass(createSPIRVToBinary({"spirv", "3.0"}));
  addHostPasses(pm, "spirv", options.hostLowering);
}

void nabla::buildNablaToMetalPipeline(OpPassManager &pm,
                                      const NablaToMetalOptions &options) {
  buildSPIRVLowering(pm, "metal", options.abi, options.relocStrategy,
                     options.workgroupSize, options.subgroupSize,
                     options.emulateFloatAtomics, options.dynamicSharedMemory,
                     options.optLevel, "metal", /*loopLimit=*/0);
  pm.addPass(createSPIRVToBinary({"msl", options.mslVersion.getValue()}));
  addHostPasses(pm, "metal", options.hostLowering);
}
