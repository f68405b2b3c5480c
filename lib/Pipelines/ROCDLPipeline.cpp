//===- ROCDLPipeline.cpp - The nabla-to-rocdl pipeline --------------------===//
//
// Target check, GPU-to-ROCDL conversion (math through ocml), stack
// allocations moved to AMDGPU's private address space, target attach and
// serialization to hsaco with LLVM's AMDGPU back end and ld.lld, linking
// Debian's rocm-device-libs bitcode. Upstream has no ROCDL pipeline builder.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

#ifndef NABLA_ROCM_TOOLKIT_DIR
#define NABLA_ROCM_TOOLKIT_DIR ""
#endif

std::string nabla::getDefaultROCmToolkit() {
  if (const char *env = std::getenv("NABLA_ROCM_TOOLKIT"))
    return env;
  return NABLA_ROCM_TOOLKIT_DIR;
}

void nabla::buildNablaToROCDLPipeline(OpPassManager &pm,
                                      const NablaToROCDLOptions &options) {
  addFrontendPasses(pm, "rocdl", options.chip, options.abi,
                    options.relocStrategy, options.toolkit);
  unsigned lanes = options.wave64.getValue() ? 64u : 32u;
  pm.nest<gpu::GPUModuleOp>().addPass(nabla::createExpandAtomics());
  pm.nest<gpu::GPUModuleOp>().addPass(
      nabla::createLowerSubgroupBarrier({"rocdl"}));
  pm.nest<gpu::GPUModuleOp>().addPass(nabla::createLowerAllReduce(
      {/*subgroupSize=*/lanes, /*subgroupBuiltins=*/false,
       /*maxWorkgroupSize=*/1024}));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());

  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(nabla::createLowerSubgroupReduce({lanes}));
  // Math ops become OCML calls before convert-gpu-to-rocdl, whose own
  // math-to-OCML patterns lose to whatever lowering another loaded dialect
  // (NVVM, AMX) contributes.
  device.addPass(nabla::createROCDLMathToOCML({options.chip.getValue()}));
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = options.chip.getValue();
  rocdl.indexBitwidth = 64;
  rocdl.runtime = gpu::amd::Runtime::HIP;
  device.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  device.addPass(nabla::createROCDLPrivateAllocas());
  device.addPass(nabla::createInternalizeDeviceFunctions());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  GpuROCDLAttachTargetOptions attach;
  attach.chip = options.chip.getValue();
  attach.optLevel = options.optLevel.getValue();
  attach.wave64Flag = options.wave64.getValue();
  pm.addPass(createGpuROCDLAttachTarget(attach));

  // Upstream's gpu-module-to-binary, with heavily used OCML functions kept
  // out of line.
  nabla::ModuleToBinaryOptions binary;
  binary.toolkitPath = options.toolkit.empty() ? getDefaultROCmToolkit()
                                               : options.toolkit.getValue();
  binary.compilationTarget = "bin";
  pm.addPass(nabla::createModuleToBinary(binary));
  addHostPasses(pm, "rocdl", options.hostLowering);
}
