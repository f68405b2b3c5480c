//===- NablaAttrs.h - Attributes of the nabla dialect -----------*- C++ -*-===//
// C++ -*-===//
//
// The `Activity` enum and its attribute `#nabla.activity<...>`.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLAATTRS_H
#define NABLA_DIALECT_NABLA_IR_NABLAATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "nabla/Dialect/Nabla/IR/NablaEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nabla/Dialect/Nabla/IR/NablaAttrs.h.inc"

#endif // NABLA_DIALECT_NABLA_IR_NABLAATTRS_H
