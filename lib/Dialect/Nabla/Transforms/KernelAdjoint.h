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

/// Marks a `nabla.autodiff` of a deterministic kernel adjoint: the enclosing
/// kernel's last argument is the scratch of the ordered accumulation.
inline constexpr llvm::StringLiteral kScratchAttrName = "nabla.scratch";

/// A body function's argument that is one of the kernel's workgroup or
/// private attributions: its contents die with the kernel (nothing reads
/// them after the body returns), and the adjoint kernel zeroes its shadow
/// before the body's derivative runs, so the derivative may take the
/// shadow's incoming value as zero and drop writes nothing reads.
inline constexpr llvm::StringLiteral kAttributionArgAttrName =
    "nabla.attribution";

/// The attribute (i64) on a deterministic adjoint kernel and on its derivative
/// function: scratch words per block beyond the leading counter.
inline constexpr llvm::StringLiteral kScratchWordsAttrName =
    "nabla.scratch_words_per_block";

/// Replaces `request` by the adjoint kernel it names (holding a
/// `nabla.autodiff` for the pass to expand next). `deterministic` (the pass
/// option, or the request's own attribute) adds the trailing scratch
/// parameter of the ordered accumulation.
mlir::LogicalResult expandKernelAdjoint(KernelAdjointOp request,
                                        bool deterministic);

/// Replaces `request` by the forward-mode kernel it names (holding a
/// `nabla.fwddiff` for the pass to expand next).
mlir::LogicalResult expandKernelTangent(KernelTangentOp request);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_KERNELADJOINT_H
