//===- NablaDialect.h - The nabla dialect -----------------------*- C++ -*-===//
// C++ -*-===//
//
// Declares the `nabla` dialect class, which owns the automatic-differentiation
// ops and the activity attribute.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLADIALECT_H
#define NABLA_DIALECT_NABLA_IR_NABLADIALECT_H

#include "mlir/IR/Dialect.h"

#include "nabla/Dialect/Nabla/IR/NablaDialect.h.inc"

#endif // NABLA_DIALECT_NABLA_IR_NABLADIALECT_H
