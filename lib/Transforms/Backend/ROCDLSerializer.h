//===- ROCDLSerializer.h - gpu.modules for AMD GPUs, with IR hooks --------===//
//
// Upstream's ROCDL serializer does not pass gpu::TargetOptions' LLVM IR
// callbacks on (NVVM's does): nabla-module-to-binary serializes ROCDL
// modules itself, through this subclass of it.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_TRANSFORMS_BACKEND_ROCDLSERIALIZER_H
#define NABLA_LIB_TRANSFORMS_BACKEND_ROCDLSERIALIZER_H

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace nabla {

/// Whether every target of `module` is a #rocdl.target (and there is one).
bool hasOnlyROCDLTargets(mlir::gpu::GPUModuleOp module);

/// Replaces `module` (hasOnlyROCDLTargets) by a gpu.binary with one object
/// per target, as gpu-module-to-binary does, running `options`' linked and
/// optimized LLVM IR callbacks on the way.
mlir::LogicalResult
serializeROCDLModule(mlir::gpu::GPUModuleOp module,
                     const mlir::gpu::TargetOptions &options);

} // namespace nabla

#endif // NABLA_LIB_TRANSFORMS_BACKEND_ROCDLSERIALIZER_H
