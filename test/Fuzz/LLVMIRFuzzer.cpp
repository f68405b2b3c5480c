//===- LLVMIRFuzzer.cpp - Fuzz target: a frontend's LLVM IR ---------------===//
//
// nabla-fuzz-llvm-ir: reads the input as LLVM IR the way the tools read a
// `.ll` file (LLVM's parser and verifier, per-instruction locations, MLIR's
// importer), then runs a whole pipeline on it, which raises it
// (`--nabla-raise-llvm`), differentiates the Enzyme requests it finds and
// lowers the kernels, verifying the IR after every pass. The pipeline is
// nabla-to-spirv (no workgroup size: specialization constants), or the one
// the input names with `target=nvvm|rocdl|metal` anywhere (a comment line);
// NVVM stops at PTX (no ptxas).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "nabla/Pipelines/Pipelines.h"

#include <cstddef>
#include <cstdint>

using nabla::fuzz::findOption;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nabla::fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  nabla::fuzz::FuzzContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = context.parseLLVMIR(text);
  if (!module)
    return 0;
  mlir::PassManager pm(&context.get());
  std::string target = findOption(text, "target").value_or("spirv");
  if (target == "nvvm") {
    nabla::NablaToNVVMOptions options;
    options.cubin = false;
    nabla::buildNablaToNVVMPipeline(pm, options);
  } else if (target == "rocdl") {
    nabla::buildNablaToROCDLPipeline(pm, nabla::NablaToROCDLOptions());
  } else if (target == "metal") {
    nabla::buildNablaToMetalPipeline(pm, nabla::NablaToMetalOptions());
  } else {
    nabla::buildNablaToSPIRVPipeline(pm, nabla::NablaToSPIRVOptions());
  }
  (void)context.run(pm, *module);
  return 0;
}
