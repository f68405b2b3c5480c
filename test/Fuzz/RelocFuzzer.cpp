//===- RelocFuzzer.cpp - Fuzz target: reloc-raise, validate, reloc-lower --===//
//
// nabla-fuzz-reloc: parses and verifies the input, then runs reloc-raise,
// nabla-validate, reloc-link and reloc-lower, verifying the IR after each
// pass. The input chooses the strategy by naming it (`strategy=table`, as
// the lit RUN lines do); otherwise every strategy runs on its own copy.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <vector>

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
  std::vector<std::string> strategies = {
      "bake", "patch", "table", "materialize", "defer", "bake-or-materialize"};
  if (std::optional<std::string> strategy =
          nabla::fuzz::findOption(text, "strategy"))
    strategies = {*strategy};
  for (const std::string &strategy : strategies) {
    mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
    mlir::PassManager pm(&context.get());
    if (failed(mlir::parsePassPipeline(
            "builtin.module(reloc-raise,nabla-validate,reloc-link,"
            "reloc-lower{strategy=" +
                strategy + "})",
            pm, llvm::nulls())))
      continue; // A strategy name the option parser rejects.
    (void)context.run(pm, *copy);
  }
  return 0;
}
