//===- Pipelines.cpp - Registration of Nabla's named pipelines ------------===//
//
// Registers `nabla-to-{nvvm,rocdl,spirv,metal}` with the pass registry and
// holds the pieces the target pipelines share.
//
//===----------------------------------------------------------------------===//

#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Support/OptionNames.h"

#include "nabla/Conversion/Passes.h"
#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Dialect/Reloc/Transforms/Passes.h"
#include "nabla/Host/Passes.h"
#include "nabla/Support/TargetOptions.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

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
  // Host-level AD before host code is set aside: it adds launches of the
  // kernels' adjoints, whose sizes are annotated next.
  pm.addPass(createDifferentiateHost());
  pm.addPass(createAnnotateLaunchSizes());
  pm.addPass(createRaiseLLVM());
  pm.addPass(createSetAsideHostCode());
  // Before AD, which differentiates through private memory.
  pm.nest<gpu::GPUModuleOp>().addPass(createPromotePrivateAllocs());
  pm.addPass(createCheckInput());
  pm.addPass(createValidate());
  pm.addPass(createDifferentiate());
  pm.addPass(createMaterializeTapes());
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

namespace {

/// The names of a pipeline's options: llvm::cl's map of the options
/// registered with the struct (a protected base of PassOptions).
template <typename OptionsT> struct OptionNamesOf : public OptionsT {
  std::vector<std::string> get() const {
    std::vector<std::string> names;
    for (const auto &entry : this->OptionsMap)
      names.push_back(entry.first.str());
    llvm::sort(names);
    return names;
  }
};

/// What every pipeline's options must satisfy.
template <typename OptionsT>
std::string checkCommonOptions(const OptionsT &options) {
  if (options.optLevel < 0 || options.optLevel > 3)
    return "opt-level " + std::to_string(options.optLevel) +
           " is out of range (0 to 3)";
  StringRef strategy = options.relocStrategy.getValue();
  if (!strategy.empty() &&
      !llvm::is_contained({"bake", "patch", "table", "materialize", "defer",
                           "bake-or-materialize"},
                          strategy))
    return "unknown reloc-strategy '" + strategy.str() +
           "' (expected bake, patch, table, materialize, defer or "
           "bake-or-materialize)";
  return "";
}

template <typename OptionsT>
std::string checkSPIRVOptions(StringRef target, const OptionsT &options) {
  std::string error = checkCommonOptions(options);
  if (!error.empty())
    return error;
  unsigned subgroup = options.subgroupSize;
  if (subgroup == 0 || subgroup > 128 || !llvm::isPowerOf2_32(subgroup))
    return "subgroup-size " + std::to_string(subgroup) +
           " is not a power of two from 1 to 128";
  if (options.dynamicSharedMemory < -1)
    return "dynamic-shared-memory " +
           std::to_string(options.dynamicSharedMemory) +
           " is negative (-1: not given)";
  return nabla::checkTargetOptions(
      {target, "", false, options.abi, "", "", options.workgroupSize});
}

/// Registers a pipeline whose options are checked while the pipeline is
/// built, before any pass runs: an unknown name gets the nearest valid one
/// and the list, a bad value its reason (upstream's registration printed
/// "no such option" to stderr and "failed to add", and a bad value surfaced
/// only after differentiation, with the module printed).
template <typename OptionsT>
void registerCheckedPipeline(StringRef argument, StringRef description,
                             void (*build)(OpPassManager &, const OptionsT &),
                             std::string (*check)(const OptionsT &)) {
  std::string name = argument.str();
  registerPassPipeline(
      argument, description,
      [=](OpPassManager &pm, StringRef text,
          function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (failed(nabla::checkOptionKeys(
                name, text, OptionNamesOf<OptionsT>().get(), errorHandler)))
          return failure();
        OptionsT options;
        std::string parseError;
        llvm::raw_string_ostream os(parseError);
        if (failed(options.parseFromString(text, os))) {
          // llvm::cl's words, without its "<Pass-Options-Parser>: ".
          StringRef message = StringRef(parseError).trim();
          if (message.consume_front("<Pass-Options-Parser>:"))
            message = message.trim();
          if (message.empty())
            message = "an option's value does not parse (llvm::cl's message "
                      "above)";
          return errorHandler(name + ": " + message);
        }
        std::string error = check(options);
        if (!error.empty())
          return errorHandler(name + ": " + error);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(OptionsT());
      });
}

} // namespace

std::string nabla::checkPipelineOptions(const NablaToNVVMOptions &options) {
  std::string error = checkCommonOptions(options);
  if (!error.empty())
    return error;
  return checkTargetOptions({"nvvm",
                             options.chip,
                             true,
                             options.abi,
                             options.toolkit,
                             options.features,
                             {}});
}

std::string nabla::checkPipelineOptions(const NablaToROCDLOptions &options) {
  std::string error = checkCommonOptions(options);
  if (!error.empty())
    return error;
  return checkTargetOptions(
      {"rocdl", options.chip, true, options.abi, options.toolkit, "", {}});
}

std::string nabla::checkPipelineOptions(const NablaToSPIRVOptions &options) {
  return checkSPIRVOptions("spirv", options);
}

std::string nabla::checkPipelineOptions(const NablaToMetalOptions &options) {
  return checkSPIRVOptions("metal", options);
}

void nabla::registerNablaPipelines() {
  registerCheckedPipeline<NablaToNVVMOptions>(
      "nabla-to-nvvm",
      "Lower target-neutral GPU kernels to gpu.binary ops with PTX and cubin",
      buildNablaToNVVMPipeline, checkPipelineOptions);
  registerCheckedPipeline<NablaToROCDLOptions>(
      "nabla-to-rocdl",
      "Lower target-neutral GPU kernels to gpu.binary ops with AMD hsaco",
      buildNablaToROCDLPipeline, checkPipelineOptions);
  registerCheckedPipeline<NablaToSPIRVOptions>(
      "nabla-to-spirv",
      "Lower target-neutral GPU kernels to gpu.binary ops with validated "
      "SPIR-V for Vulkan",
      buildNablaToSPIRVPipeline, checkPipelineOptions);
  registerCheckedPipeline<NablaToMetalOptions>(
      "nabla-to-metal",
      "Lower target-neutral GPU kernels to gpu.binary ops with Metal Shading "
      "Language source (SPIR-V path + SPIRV-Cross)",
      buildNablaToMetalPipeline, checkPipelineOptions);
}
