//===- NVVMPipelineFuzzer.cpp - Fuzz target: nabla-to-nvvm ----------------===//
//
// nabla-fuzz-nvvm: the nabla-to-nvvm pipeline up to PTX, in process
// (cubin=false: ptxas is an external program). See PipelineFuzzer.h.
//
//===----------------------------------------------------------------------===//

#include "PipelineFuzzer.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nabla::fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return nabla::fuzz::fuzzPipeline(
      data, size, nabla::CompileTarget::NVVM,
      [](mlir::OpPassManager &pm, llvm::StringRef text) {
        nabla::NablaToNVVMOptions options;
        nabla::fuzz::readCommonOptions(text, options);
        if (std::optional<std::string> chip =
                nabla::fuzz::findOption(text, "chip"))
          options.chip = *chip;
        options.cubin = false;
        nabla::buildNablaToNVVMPipeline(pm, options);
      });
}
