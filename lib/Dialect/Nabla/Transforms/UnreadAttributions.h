//===- UnreadAttributions.h - Writes no read needs, in derivatives -*- C++ -*-===//
//
// A kernel adjoint's derivative repeats the primal's forward sweep, also the
// parts only the primal's outputs needed: a block reduction whose result
// went to a `dupnoneed` buffer, or whose adjoint (a broadcast) needs no
// primal value, still fills its workgroup tree. These helpers drop such
// writes to the kernel's attributions, then the barriers that only ordered
// them.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_UNREADATTRIBUTIONS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_UNREADATTRIBUTIONS_H

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nabla {

/// The callee arguments of `request` (a reverse-mode request right inside a
/// gpu.func kernel) that are kernel attributions at this call, as
/// kAttributionArgAttrName marks them on a kernel adjoint's body: `dup`
/// memrefs passed as a workgroup or private attribution of the kernel with a
/// shadow that is one too, which the kernel only fills with zeros before the
/// request, and neither of which anything uses after it (the frontends'
/// Enzyme kernels: zero the shadow, call, return).
llvm::SmallVector<unsigned>
attributionOperands(mlir::Operation *request,
                    llvm::ArrayRef<Activity> activities);

/// Erases the stores into each of `buffers` (a kernel's attributions, whose
/// contents die with it) when nothing but stores into the same buffer uses
/// what is loaded from it, through pure ops. Returns true if it erased any;
/// the loads and the values they fed are then dead code.
bool eraseUnreadAttributions(llvm::ArrayRef<mlir::Value> buffers);

/// Merges barriers nothing separates: a `gpu.barrier` after another with
/// only memory-free ops between them, and an `scf.for` with a constant,
/// positive trip count whose body holds nothing but barriers and memory-free
/// ops (one barrier). Returns true if it changed anything.
bool mergeAdjacentBarriers(mlir::func::FuncOp function);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_UNREADATTRIBUTIONS_H
