//===- NablaInterfaces.h - Interfaces of the nabla dialect ------*- C++ -*-===//
//
// Declares `DifferentiableOpInterface` (see NablaInterfaces.td), through
// which ops give nabla-differentiate their local derivatives.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLAINTERFACES_H
#define NABLA_DIALECT_NABLA_IR_NABLAINTERFACES_H

#include "nabla/Dialect/Nabla/IR/DerivativeEmitters.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h.inc"

#endif // NABLA_DIALECT_NABLA_IR_NABLAINTERFACES_H
