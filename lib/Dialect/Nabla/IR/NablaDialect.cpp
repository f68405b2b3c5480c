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

/// The loop hints of reverse mode: positive integers, `max_trip_count` on an
/// scf.for, `checkpoints` on an scf.for or scf.while. Other `nabla.*`
/// attributes are set by nabla-differentiate on the functions it generates.
LogicalResult NablaDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  bool tripCount = name == "nabla.max_trip_count";
  if (!tripCount && name != "nabla.checkpoints")
    return success();
  auto value = dyn_cast<IntegerAttr>(attribute.getValue());
  if (!value || value.getType().isIndex() || value.getValue().isNonPositive())
    return op->emitOpError("attribute '")
           << name << "' must be a positive integer";
  StringRef opName = op->getName().getStringRef();
  if (opName != "scf.for" && (tripCount || opName != "scf.while"))
    return op->emitOpError("attribute '")
           << name << "' belongs on "
           << (tripCount ? "an scf.for" : "an scf.for or scf.while");
  return success();
}
