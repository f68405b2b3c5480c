//===- EnzymeCalls.cpp - Enzyme's entry points and markers by name --------===//
//
// Which calls of a frontend's IR are Enzyme requests (autodiff, fwddiff, the
// split mode's augmentfwd, reverse and augmentsize), which globals are its
// markers, and where a split-mode request's tape prefix ends.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace nabla::raise;

std::optional<bool> nabla::raise::getEnzymeMode(StringRef name) {
  if (name.contains("__enzyme_autodiff") || getEnzymeSplitHalf(name))
    return true;
  if (name.contains("__enzyme_fwddiff"))
    return false;
  return std::nullopt;
}

std::optional<StringRef> nabla::raise::getEnzymeSplitHalf(StringRef name) {
  if (name.contains("__enzyme_augmentfwd"))
    return StringRef("augmented");
  if (name.contains("__enzyme_reverse"))
    return StringRef("reverse");
  return std::nullopt;
}

bool nabla::raise::isEnzymeAugmentSize(StringRef name) {
  return name.contains("__enzyme_augmentsize");
}

bool nabla::raise::isSplitMarker(StringRef name) {
  return name == "enzyme_allocated" || name == "enzyme_tape" ||
         name == "enzyme_nofree";
}

EnzymeSplitPrefix nabla::raise::getEnzymeSplitPrefix(LLVM::CallOp call) {
  EnzymeSplitPrefix prefix;
  if (!call.getCallee() || !getEnzymeSplitHalf(*call.getCallee()))
    return prefix;
  auto operands = call.getArgOperands().drop_front();
  auto splitMarker = [](Value v) -> std::optional<StringRef> {
    auto load = v.getDefiningOp<LLVM::LoadOp>();
    if (!load)
      return std::nullopt;
    Value address = load.getAddr();
    while (auto cast = address.getDefiningOp<LLVM::AddrSpaceCastOp>())
      address = cast.getArg();
    auto global = address.getDefiningOp<LLVM::AddressOfOp>();
    if (!global || !isSplitMarker(global.getGlobalName()))
      return std::nullopt;
    return global.getGlobalName();
  };
  while (prefix.size < operands.size()) {
    std::optional<StringRef> marker = splitMarker(operands[prefix.size]);
    if (!marker)
      break;
    if (*marker == "enzyme_nofree") {
      prefix.size += 1;
      continue;
    }
    if (prefix.size + 1 >= operands.size())
      break;
    if (*marker == "enzyme_tape")
      prefix.tape = operands[prefix.size + 1];
    prefix.size += 2;
  }
  return prefix;
}

std::optional<StringRef> nabla::raise::getMarkerActivity(StringRef name) {
  return llvm::StringSwitch<std::optional<StringRef>>(name)
      .Case("enzyme_dup", StringRef("dup"))
      .Case("enzyme_dupnoneed", StringRef("dupnoneed"))
      .Case("enzyme_const", StringRef("const"))
      .Case("enzyme_out", StringRef("active"))
      .Default(std::nullopt);
}
