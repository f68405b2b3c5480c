//===- GPUDerivatives.h - Derivatives of GPU collectives --------*- C++ -*-===//
//
// Tangents and adjoints of the GPU collectives: `gpu.shuffle` (xor, up, down,
// idx), `gpu.subgroup_reduce` and `gpu.all_reduce` (add, mul, float min/max).
// Each is itself made of collectives, emitted at the mirrored point of the
// sweep, so every lane that ran the primal collective runs its derivative (no
// new divergence).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_GPUDERIVATIVES_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_GPUDERIVATIVES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace nabla {

/// True for `gpu.barrier` and `nabla.subgroup_barrier`: synchronization that
/// moves no data (recomputation skips them, a checkpointed loop may hold
/// them). Proofs that need the whole block to synchronize ask for
/// `gpu.barrier` alone.
bool isBarrier(mlir::Operation *op);

/// True if `op` or an op nested in it is a barrier (isBarrier).
bool holdsBarrier(mlir::Operation *op);

/// True for the collectives this file differentiates (and those it rejects
/// with a diagnostic: other shuffle modes and reductions).
bool isGPUCollective(mlir::Operation *op);

/// The tangent of `op`'s float result from its value operand's `tangent`;
/// `operands` and `result` are `op`'s operands and result as available at the
/// insertion point.
mlir::FailureOr<mlir::Value> emitCollectiveTangent(mlir::OpBuilder &builder,
                                                   mlir::Operation *op,
                                                   mlir::ValueRange operands,
                                                   mlir::Value result,
                                                   mlir::Value tangent);

/// The contribution to the value operand's adjoint from the result's
/// `adjoint`; `operands` and `result` as for emitCollectiveTangent.
mlir::FailureOr<mlir::Value> emitCollectiveAdjoint(mlir::OpBuilder &builder,
                                                   mlir::Operation *op,
                                                   mlir::ValueRange operands,
                                                   mlir::Value result,
                                                   mlir::Value adjoint);

/// The calling thread's linear id in its block (x fastest) and the block's
/// thread count (`ofBlocks`: the block's linear id in the grid and the grid's
/// block count), as index values.
std::pair<mlir::Value, mlir::Value>
emitLinearIdAndCount(mlir::OpBuilder &builder, mlir::Location loc,
                     bool ofBlocks = false);

/// Each of `threads` threads' share of `size` elements, rounded up:
/// (size + threads - 1) / threads, in index arithmetic the tape-size
/// formulas evaluate.
mlir::Value emitShareOf(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value size, mlir::Value threads);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_GPUDERIVATIVES_H
