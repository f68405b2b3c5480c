//===- ROCDLPipelineFuzzer.cpp - Fuzz target: nabla-to-rocdl --------------===//
//
// nabla-fuzz-rocdl: the nabla-to-rocdl pipeline in process, through AMDGPU
// code generation. Its toolkit is a scratch directory holding the device
// bitcode but no ld.lld, so serialization stops with an error where it would
// start the linker (an external program). See PipelineFuzzer.h.
//
//===----------------------------------------------------------------------===//

#include "PipelineFuzzer.h"

#include "llvm/Support/FileSystem.h"

#include <cstdio>

/// A toolkit with Nabla's device bitcode and no llvm/bin/ld.lld.
static std::string makeToolkitWithoutLinker() {
  std::string toolkit = nabla::fuzz::getScratchDirectory() + "/rocm-toolkit";
  std::string bitcode = nabla::getDefaultROCmToolkit() + "/amdgcn/bitcode";
  if (llvm::sys::fs::create_directories(toolkit + "/amdgcn") ||
      llvm::sys::fs::create_link(bitcode, toolkit + "/amdgcn/bitcode"))
    std::fprintf(stderr, "nabla-fuzz-rocdl: no device bitcode at %s\n",
                 bitcode.c_str());
  return toolkit;
}

static std::string toolkit;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nabla::fuzz::initialize();
  toolkit = makeToolkitWithoutLinker();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return nabla::fuzz::fuzzPipeline(
      data, size, nabla::CompileTarget::ROCDL,
      [](mlir::OpPassManager &pm, llvm::StringRef text) {
        nabla::NablaToROCDLOptions options;
        nabla::fuzz::readCommonOptions(text, options);
        if (std::optional<std::string> chip =
                nabla::fuzz::findOption(text, "chip"))
          options.chip = *chip;
        if (nabla::fuzz::findOption(text, "wave64") == std::string("false"))
          options.wave64 = false;
        options.toolkit = toolkit;
        nabla::buildNablaToROCDLPipeline(pm, options);
      });
}
