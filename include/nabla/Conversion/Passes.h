//===- Passes.h - Nabla's conversion passes ---------------------*- C++ -*-===//
//
// Declarations generated from Conversion/Passes.td, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_CONVERSION_PASSES_H
#define NABLA_CONVERSION_PASSES_H

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nabla {

#define GEN_PASS_DECL
#include "nabla/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nabla/Conversion/Passes.h.inc"

} // namespace nabla

#endif // NABLA_CONVERSION_PASSES_H
