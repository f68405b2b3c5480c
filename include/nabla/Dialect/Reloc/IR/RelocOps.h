//===- RelocOps.h - Operations of the reloc dialect -------------*- C++ -*-===//
// C++ -*-===//
//
// Declares `reloc.global`, `reloc.get_global` and `reloc.addressof`.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOCOPS_H
#define NABLA_DIALECT_RELOC_IR_RELOCOPS_H

#include "nabla/Dialect/Reloc/IR/RelocAttrs.h"
#include "nabla/Dialect/Reloc/IR/RelocDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "nabla/Dialect/Reloc/IR/RelocOps.h.inc"

#endif // NABLA_DIALECT_RELOC_IR_RELOCOPS_H
