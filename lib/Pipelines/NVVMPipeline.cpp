//===- NVVMPipeline.cpp - The nabla-to-nvvm pipeline ----------------------===//
//
// Target check, then upstream's GPU-to-NVVM lowering serializing to PTX with a
// PTX version that fits the chip (LLVM otherwise picks PTX 6.0 and aborts on
// sm_80+), then ptxas for the cubin.
//
//===----------------------------------------------------------------------===//

#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Pipelines/Passes.h"

using namespace mlir;

std::string nabla::getDefaultPTXFeatures(StringRef chip) {
  // Minimum PTX ISA version per SM architecture (PTX ISA release notes).
  static const std::pair<unsigned, unsigned> kMinimumPTX[] = {
      {120, 87}, {101, 86}, {100, 86}, {90, 78}, {89, 78}, {87, 74},
      {86, 71},  {80, 70},  {75, 63},  {72, 61}, {70, 60}};
  unsigned sm = 0;
  StringRef digits = chip;
  if (!digits.consume_front("sm_") ||
      digits.take_while([](char c) { return c >= '0' && c <= '9'; }).getAsInteger(10, sm))
    return "+ptx60";
  unsigned ptx = 60;
  for (auto [minimumSM, version] : kMinimumPTX)
    if (sm >= minimumSM) {
      ptx = version;
      break;
    }
  // Architecture-specific variants (sm_90a, sm_100a) need PTX 8.0+.
  if (digits.ends_with("a") && sm >= 90)
    ptx = std::max(ptx, 80u);
  return "+ptx" + std::to_string(ptx);
}

void nabla::buildNablaToNVVMPipeline(OpPassManager &pm,
                                     const NablaToNVVMOptions &options) {
  pm.addPass(createCheckTargetSupport(
      {"nvvm", options.chip.getValue(), options.abi.getValue()}));

  gpu::GPUToNVVMPipelineOptions upstream;
  upstream.cubinChip = options.chip.getValue();
  upstream.cubinFeatures = options.features.empty()
                               ? getDefaultPTXFeatures(options.chip)
                               : options.features.getValue();
  upstream.cubinFormat = "isa";
  upstream.optLevel = options.optLevel.getValue();
  gpu::buildLowerToNVVMPassPipeline(pm, upstream);

  if (options.cubin)
    pm.addPass(createAssembleCubin(
        {options.toolkit.getValue(), options.optLevel.getValue()}));
}
