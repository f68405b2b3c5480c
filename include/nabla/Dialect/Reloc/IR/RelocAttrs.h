//===- RelocAttrs.h - Attributes of the reloc dialect -----------*- C++ -*-===//
// C++ -*-===//
//
// The record kind enum and `#reloc.kind<...>`.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOCATTRS_H
#define NABLA_DIALECT_RELOC_IR_RELOCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "nabla/Dialect/Reloc/IR/RelocEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nabla/Dialect/Reloc/IR/RelocAttrs.h.inc"

#endif // NABLA_DIALECT_RELOC_IR_RELOCATTRS_H
