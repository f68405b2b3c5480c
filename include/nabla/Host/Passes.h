//===- Passes.h - Host program lowering passes ------------------*- C++ -*-===//
//
// Declarations generated from Passes.td, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_HOST_PASSES_H
#define NABLA_HOST_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nabla {

#define GEN_PASS_DECL
#include "nabla/Host/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nabla/Host/Passes.h.inc"

/// True if `module` holds host code that uses the GPU: an op of the gpu
/// dialect outside every gpu.module and gpu.binary.
bool hasGPUHostCode(mlir::ModuleOp module);

} // namespace nabla

#endif // NABLA_HOST_PASSES_H
