//===- RelocDialect.cpp - The reloc dialect and its attributes ------------===//
//
// Registers the `reloc` ops and the record-kind attribute, and holds the
// TableGen-generated enum and attribute definitions.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/IR/RelocDialect.h"
#include "nabla/Dialect/Reloc/IR/RelocAttrs.h"
#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nabla::reloc;

#include "nabla/Dialect/Reloc/IR/RelocDialect.cpp.inc"
#include "nabla/Dialect/Reloc/IR/RelocEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nabla/Dialect/Reloc/IR/RelocAttrs.cpp.inc"

void RelocDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nabla/Dialect/Reloc/IR/RelocAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "nabla/Dialect/Reloc/IR/RelocOps.cpp.inc"
      >();
}
