//===- InitAll.h - Register every Nabla dialect and pass --------*- C++ -*-===//
// C++ -*-===//
//
// One entry point for tools and frontends: registers Nabla's dialects into a
// DialectRegistry and Nabla's passes and pipelines with the global registry.
// Upstream MLIR's own are registered separately (mlir/InitAll*.h).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_INITALL_H
#define NABLA_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace nabla {

/// Adds the `nabla` and `reloc` dialects to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Adds every upstream dialect, extension and LLVM IR translation interface
/// (the GPU pipelines serialize through LLVM IR) to `registry`.
void registerUpstreamDialects(mlir::DialectRegistry &registry);

/// Registers Nabla's passes and named pipelines (idempotent).
void registerAllPasses();

} // namespace nabla

#endif // NABLA_INITALL_H
