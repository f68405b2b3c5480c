//===- DifferentiateFuzzer.cpp - Fuzz target: nabla-differentiate ---------===//
//
// nabla-fuzz-differentiate: parses and verifies the input, then runs
// `nabla-differentiate` (verifying the result). Options the input names
// anywhere, as a lit RUN line does (`deterministic=true`, `tape-budget=N`,
// `checkpoints=N`, `remarks=true`), are passed on, integers clamped to
// modest values.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using nabla::fuzz::findIntegerOption;
using nabla::fuzz::findOption;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nabla::fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  nabla::fuzz::FuzzContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = context.parse(text);
  if (!module)
    return 0;

  std::string options;
  llvm::raw_string_ostream os(options);
  for (const char *flag : {"deterministic", "remarks"})
    if (findOption(text, flag) == std::string("true"))
      os << " " << flag << "=true";
  if (auto budget = findIntegerOption(text, "tape-budget", 0, 1 << 16))
    os << " tape-budget=" << *budget;
  if (auto checkpoints = findIntegerOption(text, "checkpoints", 1, 64))
    os << " checkpoints=" << *checkpoints;

  mlir::PassManager pm(&context.get());
  if (failed(mlir::parsePassPipeline("builtin.module(nabla-differentiate{" +
                                         options + "})",
                                     pm, llvm::errs())))
    nabla::fuzz::reportFinding("cannot build the pipeline with options '" +
                               options + "'");
  (void)context.run(pm, *module);
  return 0;
}
