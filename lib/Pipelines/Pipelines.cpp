//===- Pipelines.cpp - Registration of Nabla's named pipelines ------------===//
//
// Registers `nabla-to-{nvvm,rocdl,spirv,metal}` with the pass registry and
// holds the pieces the target pipelines share.
//
//===----------------------------------------------------------------------===//

#include "nabla/Pipelines/Pipelines.h"

#include "nabla/Conversion/Passes.h"
#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Dialect/Reloc/Transforms/Passes.h"
#include "nabla/Host/Passes.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

std::string nabla::getRelocStrategy(StringRef target, StringRef abi,
                                    StringRef override) {
  if (!override.empty())
    return override.str();
  if (abi == "v1")
    return "bake-or-materialize";
  return target == "nvvm" || target == "rocdl" ? "patch" : "table";
}

void nabla::addFrontendPasses(OpPassManager &pm, StringRef target,
                              StringRef chip, StringRef abi,
                              StringRef relocStrategy, StringRef toolkit,
                              ArrayRef<int64_t> workgroupSize,
                              StringRef features) {
  // Host programs: gpu.launch bodies become kernels, and kernels launched
  // with constant sizes are compiled for them.
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createAnnotateLaunchSizes());
  pm.addPass(createRaiseLLVM());
  pm.addPass(createSetAsideHostCode());
  // Before AD, which differentiates through private memory.
  pm.nest<gpu::GPUModuleOp>().addPass(createPromotePrivateAllocs());
  pm.addPass(createCheckInput());
  pm.addPass(createValidate());
  pm.addPass(createDifferentiate());
  pm.addPass(reloc::createRelocLink());
  pm.addPass(
      reloc::createRelocLower({getRelocStrategy(target, abi, relocStrategy)}));
  CheckTargetSupportOptions check;
  check.target = target.str();
  check.chip = chip.str();
  check.requireChip = target == "nvvm" || target == "rocdl";
  check.features = features.str();
  check.abi = abi.str();
  check.toolkit = toolkit.str();
  check.workgroupSize = llvm::to_vector(workgroupSize);
  pm.addPass(createCheckTargetSupport(check));
}

void nabla::addHostPasses(OpPassManager &pm, StringRef target,
                          bool lowerHostCode) {
  pm.addPass(createRestoreHostCode());
  if (lowerHostCode)
    pm.addPass(createLowerHostToLLVM({target.str()}));
}

void nabla::registerNablaPipelines() {
  PassPipelineRegistration<NablaToNVVMOptions>(
      "nabla-to-nvvm",
      "Lower target-neutral GPU kernels to gpu.binary ops with PTX and cubin",
      buildNablaToNVVMPipeline);
  PassPipelineRegistration<NablaToROCDLOptions>(
      "nabla-to-rocdl",
      "Lower target-neutral GPU kernels to gpu.binary ops with AMD hsaco",
      buildNablaToROCDLPipeline);
  PassPipelineRegistration<NablaToSPIRVOptions>(
      "nabla-to-spirv",
      "Lower target-neutral GPU kernels to gpu.binary ops with validated "
      "SPIR-V for Vulkan",
      buildNablaToSPIRVPipeline);
  PassPipelineRegistration<NablaToMetalOptions>(
      "nabla-to-metal",
      "Lower target-neutral GPU kernels to gpu.binary ops with Metal Shading "
      "Language source (SPIR-V path + SPIRV-Cross)",
      buildNablaToMetalPipeline);
}
