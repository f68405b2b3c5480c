//===- HostDerivative.h - Derivatives of host functions ---------*- C++ -*-===//
//
// Host-level AD: `nabla.autodiff` / `nabla.fwddiff` of a host `func.func`
// (outside every gpu.module) that allocates, copies and launches kernels.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTDERIVATIVE_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTDERIVATIVE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace nabla {

/// True if `function` is host code that launches kernels: it lies outside
/// every gpu.module and it, or a function it calls, holds a
/// `gpu.launch_func` or `gpu.launch`.
bool isHostProgram(mlir::func::FuncOp function);

/// True if some request in `module` names a host program holding a
/// `gpu.launch` region (which must be outlined before host-level AD).
bool hostRequestsNeedOutlining(mlir::ModuleOp module);

/// Replaces every `nabla.autodiff` / `nabla.fwddiff` of a host program in
/// `module` by a call of a generated host function (shared between identical
/// requests). The kernels it launches get their adjoint (`nabla.autodiff`
/// kernels, from `nabla.kernel_adjoint`) or tangent kernels in their
/// gpu.modules, holding requests for `nabla-differentiate` to expand. With
/// `remarks`, every copy kept for the reverse sweep is reported.
mlir::LogicalResult expandHostRequests(mlir::ModuleOp module, bool remarks);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTDERIVATIVE_H
