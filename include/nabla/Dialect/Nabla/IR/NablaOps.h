//===- NablaOps.h - Operations of the nabla dialect -------------*- C++ -*-===//
// C++ -*-===//
//
// Declares `nabla.autodiff` and `nabla.fwddiff`.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLAOPS_H
#define NABLA_DIALECT_NABLA_IR_NABLAOPS_H

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"
#include "nabla/Dialect/Nabla/IR/NablaAttrs.h"
#include "nabla/Dialect/Nabla/IR/NablaDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "nabla/Dialect/Nabla/IR/NablaOps.h.inc"

#endif // NABLA_DIALECT_NABLA_IR_NABLAOPS_H
