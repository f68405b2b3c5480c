//===- RelocDialect.h - The reloc dialect -----------------------*- C++ -*-===//
// C++ -*-===//
//
// Declares the `reloc` dialect class (explicit relocation records).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOCDIALECT_H
#define NABLA_DIALECT_RELOC_IR_RELOCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "nabla/Dialect/Reloc/IR/RelocDialect.h.inc"

#endif // NABLA_DIALECT_RELOC_IR_RELOCDIALECT_H
