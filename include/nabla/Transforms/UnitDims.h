//===- UnitDims.h - Launch dimensions a kernel was compiled to need -*- C++ -*-===//
//
// The reverse sweep proves an adjoint's accumulation thread-exclusive along
// some launch dimensions and, for the others, emits a run-time check (they
// must have size one) that chooses between a plain update and an atomic:
// the `scf.if` carries kUnitDimsAttrName, the dimensions it checks
// ("block_x" ... "grid_z"). A target that cannot lower the atomic branch
// (bf16 and f16 on SPIR-V: no 16-bit atomics) keeps the plain branch and records the
// dimensions on the kernel, which the manifest declares (`unit_dims`) and
// every launcher checks before launching.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TRANSFORMS_UNITDIMS_H
#define NABLA_TRANSFORMS_UNITDIMS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace nabla {

/// On an exclusivity check's `scf.if`: an array of dimension names.
inline constexpr llvm::StringLiteral kUnitDimsAttrName = "nabla.unit_dims";

/// The dimensions that the exclusivity checks guarding a bf16 or f16 atomic
/// in `root` (and the functions it calls) require to be one, sorted: what a
/// launch must satisfy once nabla-emulate-bf16 keeps their plain branches.
std::vector<std::string> halfAtomicExclusivityDims(mlir::Operation *root);

} // namespace nabla

#endif // NABLA_TRANSFORMS_UNITDIMS_H
