//===- Passes.h - Passes of the nabla dialect -------------------*- C++ -*-===//
//
// Declarations generated from Passes.td, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_TRANSFORMS_PASSES_H
#define NABLA_DIALECT_NABLA_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nabla {

#define GEN_PASS_DECL
#include "nabla/Dialect/Nabla/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nabla/Dialect/Nabla/Transforms/Passes.h.inc"

} // namespace nabla

#endif // NABLA_DIALECT_NABLA_TRANSFORMS_PASSES_H
