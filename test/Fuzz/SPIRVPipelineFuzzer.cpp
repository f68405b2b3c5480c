//===- SPIRVPipelineFuzzer.cpp - Fuzz target: nabla-to-spirv --------------===//
//
// nabla-fuzz-spirv: the nabla-to-spirv pipeline in process, through
// SPIRV-Tools validation of the serialized module. See PipelineFuzzer.h.
//
//===----------------------------------------------------------------------===//

#include "PipelineFuzzer.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nabla::fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return nabla::fuzz::fuzzPipeline(
      data, size, nabla::CompileTarget::SPIRV,
      [](mlir::OpPassManager &pm, llvm::StringRef text) {
        nabla::NablaToSPIRVOptions options;
        nabla::fuzz::readCommonOptions(text, options);
        options.workgroupSize = nabla::fuzz::readWorkgroupSize(text);
        if (std::optional<int64_t> lanes =
                nabla::fuzz::findIntegerOption(text, "subgroup-size", 0, 256))
          options.subgroupSize = static_cast<unsigned>(*lanes);
        options.emulateFloatAtomics =
            nabla::fuzz::readEmulateFloatAtomics(text);
        nabla::buildNablaToSPIRVPipeline(pm, options);
      });
}
