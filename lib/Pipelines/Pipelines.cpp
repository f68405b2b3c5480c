//===- Pipelines.cpp - Registration of Nabla's named pipelines ------------===//
//
// Registers `nabla-to-{nvvm,rocdl,spirv,metal}` with the pass registry and
// holds the pieces the target pipelines share.
//
//===----------------------------------------------------------------------===//

#include "nabla/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

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
