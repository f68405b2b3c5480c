//===- ParseFuzzer.cpp - Fuzz target: parse, verify, print, re-parse ------===//
//
// nabla-fuzz-parse: parses the input with every dialect nabla-opt registers
// and verifies it (Nabla's custom parsers, attributes and verifiers). A
// module that verifies is printed and parsed again: printed IR that does not
// parse, or does not print the same a second time, is a finding (a printer
// that disagrees with its parser).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

static std::string print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

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
  std::string printed = print(*module);
  mlir::OwningOpRef<mlir::ModuleOp> reparsed = context.parse(printed);
  if (!reparsed)
    nabla::fuzz::reportFinding("the printed module does not parse again:\n" +
                               printed);
  if (print(*reparsed) != printed)
    nabla::fuzz::reportFinding(
        "the module prints differently after a round trip:\n" + printed);
  return 0;
}
