//===- KernelAdjoint.h - Adjoints of whole kernels --------------*- C++ -*-===//
//
// Expands `nabla.kernel_adjoint`: the kernel's body becomes a device function
// and the adjoint kernel a `nabla.autodiff` of it, with shadow attributions.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_KERNELADJOINT_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_KERNELADJOINT_H

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

namespace nabla {

/// Replaces `request` by the adjoint kernel it names (holding a
/// `nabla.autodiff` for the pass to expand next).
mlir::LogicalResult expandKernelAdjoint(KernelAdjointOp request);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_KERNELADJOINT_H
