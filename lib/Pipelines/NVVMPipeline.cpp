//===- NVVMPipeline.cpp - The nabla-to-nvvm pipeline ----------------------===//
//
// Target check, then the device half of upstream's gpu-lower-to-nvvm-pipeline
// with two differences: the PTX version is chosen to fit the chip (LLVM
// otherwise picks PTX 6.0 and aborts on sm_80+), and the CUDA toolkit
// (libdevice) is passed explicitly instead of being guessed from the
// environment. ptxas then adds the cubin.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Support/TargetChips.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

std::string nabla::getDefaultPTXFeatures(StringRef chip) {
  return "+ptx" + std::to_string(getMinimumPTXVersion(chip));
}

std::string nabla::findCUDAToolkit(StringRef option) {
  if (!option.empty())
    return option.str();
  SmallVector<std::string> candidates;
  for (const char *var : {"CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"})
    if (const char *value = std::getenv(var))
      candidates.push_back(value);
  candidates.push_back("/usr/local/cuda");
  candidates.push_back("/usr/lib/cuda");
  for (const std::string &root : candidates) {
    llvm::SmallString<128> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice");
    if (llvm::sys::fs::is_directory(libdevice))
      return root;
  }
  return "";
}

void nabla::buildNablaToNVVMPipeline(OpPassManager &pm,
                                     const NablaToNVVMOptions &options) {
  std::string toolkit = findCUDAToolkit(options.toolkit);
  addFrontendPasses(pm, "nvvm", options.chip, options.abi,
                    options.relocStrategy, options.toolkit, {},
                    options.features);
  pm.nest<gpu::GPUModuleOp>().addPass(nabla::createExpandAtomics());
  pm.nest<gpu::GPUModuleOp>().addPass(
      nabla::createLowerSubgroupBarrier({"nvvm"}));
  pm.nest<gpu::GPUModuleOp>().addPass(
      createLowerAllReduce({/*subgroupSize=*/32, /*subgroupBuiltins=*/false,
                            /*maxWorkgroupSize=*/1024}));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());

  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.chip.getValue();
  attach.features = options.features.empty()
                        ? getDefaultPTXFeatures(options.chip)
                        : options.features.getValue();
  attach.optLevel = options.optLevel.getValue();
  pm.addPass(createGpuNVVMAttachTarget(attach));
  pm.addPass(createLowerAffinePass());

  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createLowerSubgroupReduce({/*subgroupSize=*/32}));
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // Integer math (ctpop, ctlz, cttz, absi) has no libdevice call: upstream's
  // GPU-to-NVVM leaves it, and it failed at translation ("missing
  // LLVMTranslationDialectInterface"); it becomes LLVM intrinsics.
  device.addPass(createConvertMathToLLVMPass());
  device.addPass(nabla::createInternalizeDeviceFunctions());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  // Upstream's gpu-module-to-binary, with heavily used libdevice functions
  // kept out of line (the PTX of a long gradient stays bounded).
  nabla::ModuleToBinaryOptions binary;
  binary.toolkitPath = toolkit;
  binary.compilationTarget = "isa";
  pm.addPass(nabla::createModuleToBinary(binary));

  if (options.cubin)
    pm.addPass(createAssembleCubin({toolkit, options.optLevel.getValue()}));
  addHostPasses(pm, "nvvm", options.hostLowering);
}
