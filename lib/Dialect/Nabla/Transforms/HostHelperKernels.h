//===- HostHelperKernels.h - Kernels host-level AD launches -----*- C++ -*-===//
//
// The buffer operations a host derivative needs beyond the program's own
// kernels: copy a range (snapshots of overwritten buffers), add one buffer
// into another (the adjoint of a copy) and zero a buffer (shadows). They
// live in `gpu.module @__nabla_host_ad`, one kernel per element type, with
// a grid-stride loop over `memref<?xT>` views, so that every target and
// every element type (f64 too, which gpu.memset cannot fill) is served.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTHELPERKERNELS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTHELPERKERNELS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace nabla {

/// Launches and flattened views for host-level AD, building the helper
/// kernels in `module` on first use.
class HostHelperKernels {
public:
  explicit HostHelperKernels(mlir::ModuleOp module) : module(module) {}

  /// `dst[dstOffset + i] = src[srcOffset + i]` for i < `count` (1-D views).
  void copy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
            mlir::Value dstOffset, mlir::Value src, mlir::Value srcOffset,
            mlir::Value count);
  /// `dst[i] += src[i]` for i < `count` (float elements, 1-D views).
  void accumulate(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
                  mlir::Value src, mlir::Value count);
  /// `dst[i] = 0` for i < `count` (a 1-D view).
  void zero(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
            mlir::Value count);

  /// The number of elements of the ranked `memref`, as an index.
  static mlir::Value numElements(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value memref);
  /// `memref` (ranked, identity layout) as a `memref<?xT>` of `count`
  /// elements.
  static mlir::Value flatten(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value memref, mlir::Value count);

private:
  enum class Kind { Copy, Accumulate, Zero };
  mlir::SymbolRefAttr getKernel(Kind kind, mlir::Type element);
  void launch(mlir::OpBuilder &b, mlir::Location loc, mlir::SymbolRefAttr,
              mlir::ValueRange operands, mlir::Value count);

  mlir::ModuleOp module;
};

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTHELPERKERNELS_H
