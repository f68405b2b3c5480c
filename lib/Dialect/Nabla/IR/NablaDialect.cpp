//===- NablaDialect.cpp - The nabla dialect and its attributes ------------===//
//
// Registers the `nabla` ops and the activity attribute, and holds the
// TableGen-generated enum and attribute definitions.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaDialect.h"
#include "nabla/Dialect/Nabla/IR/NablaAttrs.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nabla;

#include "nabla/Dialect/Nabla/IR/NablaDialect.cpp.inc"
#include "nabla/Dialect/Nabla/IR/NablaEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nabla/Dialect/Nabla/IR/NablaAttrs.cpp.inc"

void NablaDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nabla/Dialect/Nabla/IR/NablaAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "nabla/Dialect/Nabla/IR/NablaOps.cpp.inc"
      >();
}
