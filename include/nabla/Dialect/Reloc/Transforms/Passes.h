//===- Passes.h - Passes of the reloc dialect -------------------*- C++ -*-===//
//
// Declarations generated from Passes.td, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_H
#define NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_H

#include "nabla/Dialect/Reloc/IR/RelocDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nabla::reloc {

#define GEN_PASS_DECL
#include "nabla/Dialect/Reloc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nabla/Dialect/Reloc/Transforms/Passes.h.inc"

} // namespace nabla::reloc

#endif // NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_H
