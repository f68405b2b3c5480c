//===- NablaDialect.h - The nabla dialect -----------------------*- C++ -*-===//
// C++ -*-===//
//
// Declares the `nabla` dialect class, which owns the automatic-differentiation
// ops and the activity attribute.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLADIALECT_H
#define NABLA_DIALECT_NABLA_IR_NABLADIALECT_H

#include "mlir/IR/Dialect.h"

#include "nabla/Dialect/Nabla/IR/NablaDialect.h.inc"

namespace nabla {

/// On a kernel's i32 parameter: it is the presence flag of the buffer
/// parameter whose index the attribute holds, 0 when the launch passed null
/// for that buffer (the raised form of CUDA's `if (bias != NULL)`), else 1.
/// The manifest calls the flag's parameter `"presence_of": <index>`, and the
/// runtimes set it from the arguments.
inline constexpr llvm::StringLiteral kPresenceAttrName = "nabla.presence";

/// Marks the `i32` parameter a gradient kernel reading dynamic shared memory
/// (`extern __shared__`) gets: the bytes of dynamic shared memory the launch
/// asked for. The shadow region follows the primal's at that offset, so the
/// launch reserves twice the bytes. The manifest calls the parameter
/// `"dynamic_shared_memory_bytes": true`, and the runtimes set it.
inline constexpr llvm::StringLiteral kDynamicSharedBytesAttrName =
    "nabla.dynamic_shared_memory_bytes";

} // namespace nabla

#endif // NABLA_DIALECT_NABLA_IR_NABLADIALECT_H
