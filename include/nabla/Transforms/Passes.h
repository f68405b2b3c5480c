//===- Passes.h - Nabla's GPU preparation passes ----------------*- C++ -*-===//
//
// Declarations generated from Passes.td, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TRANSFORMS_PASSES_H
#define NABLA_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nabla {

#define GEN_PASS_DECL
#include "nabla/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nabla/Transforms/Passes.h.inc"

} // namespace nabla

#endif // NABLA_TRANSFORMS_PASSES_H
