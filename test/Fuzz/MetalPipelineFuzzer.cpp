//===- MetalPipelineFuzzer.cpp - Fuzz target: nabla-to-metal --------------===//
//
// nabla-fuzz-metal: the nabla-to-metal pipeline in process, through
// SPIRV-Cross's MSL generation. See PipelineFuzzer.h.
//
//===----------------------------------------------------------------------===//

#include "PipelineFuzzer.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nabla::fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return nabla::fuzz::fuzzPipeline(
      data, size, nabla::CompileTarget::Metal,
      [](mlir::OpPassManager &pm, llvm::StringRef text) {
        nabla::NablaToMetalOptions options;
        nabla::fuzz::readCommonOptions(text, options);
        options.workgroupSize = nabla::fuzz::readWorkgroupSize(text);
        if (std::optional<int64_t> lanes =
                nabla::fuzz::findIntegerOption(text, "subgroup-size", 0, 256))
          options.subgroupSize = static_cast<unsigned>(*lanes);
        options.emulateFloatAtomics =
            nabla::fuzz::readEmulateFloatAtomics(text);
        if (std::optional<std::string> version =
                nabla::fuzz::findOption(text, "msl-version"))
          options.mslVersion = *version;
        nabla::buildNablaToMetalPipeline(pm, options);
      });
}
