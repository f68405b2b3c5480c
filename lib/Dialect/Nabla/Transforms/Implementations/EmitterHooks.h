//===- EmitterHooks.h - Nabla's own op rules' access to its emitters -*- C++
//-*-===//
//
// The external models of Implementations/ are written against the public
// emitter API (nabla/Dialect/Nabla/IR/DerivativeEmitters.h), like a
// frontend's. A few of Nabla's own ops need more of the emitter than that
// API offers: calls look up custom rules, float min/max atomics and barriers
// cooperate across a block, relocation records and private allocations get
// shadows where the reverse sweep can reach them, and loops are reversed by
// the loop strategies (tapes, checkpointing, preaccumulation). These hooks,
// implemented beside the emitters, give them that access; they are private
// to lib/Dialect/Nabla/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_IMPLEMENTATIONS_EMITTERHOOKS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_IMPLEMENTATIONS_EMITTERHOOKS_H

#include "nabla/Dialect/Nabla/IR/DerivativeEmitters.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace nabla {
namespace reloc {
class GetGlobalOp;
} // namespace reloc

namespace hooks {

//--- Forward mode (ForwardMode.cpp) --------------------------------------//

/// A call with a custom forward rule (found by the rule finder).
mlir::LogicalResult forwardCall(ForwardEmitter &emitter,
                                mlir::func::CallOp call);
/// Defers a float min/max atomic's tangent to the block's next barrier.
void deferMinMaxTangent(ForwardEmitter &emitter,
                        mlir::memref::AtomicRMWOp atomic, mlir::Value shadow);
/// After a barrier of `block`: the tangents of its deferred min/max atomics.
void emitMinMaxTangents(ForwardEmitter &emitter, mlir::Block *block,
                        mlir::Location loc);
/// The shadow of a relocation record's object.
mlir::Value recordShadow(ForwardEmitter &emitter, reloc::GetGlobalOp get);

//--- Reverse mode (ForwardSweep.cpp, ReverseSweep.cpp, LoopReversal.cpp) -//

mlir::LogicalResult forwardSweepIf(ReverseEmitter &emitter, mlir::scf::IfOp op);
mlir::LogicalResult reverseSweepIf(ReverseEmitter &emitter, mlir::scf::IfOp op);
mlir::LogicalResult forwardSweepFor(ReverseEmitter &emitter,
                                    mlir::scf::ForOp op);
mlir::LogicalResult reverseSweepFor(ReverseEmitter &emitter,
                                    mlir::scf::ForOp op);
mlir::LogicalResult forwardSweepWhile(ReverseEmitter &emitter,
                                      mlir::scf::WhileOp op);
mlir::LogicalResult reverseSweepWhile(ReverseEmitter &emitter,
                                      mlir::scf::WhileOp op);
/// A call with a custom reverse rule.
mlir::LogicalResult reverseCall(ReverseEmitter &emitter,
                                mlir::func::CallOp call);
/// The shadow of a private allocation, where the reverse sweep reaches it.
mlir::LogicalResult allocaShadow(ReverseEmitter &emitter,
                                 mlir::memref::AllocaOp alloca);
/// The shadow of a relocation record's object, at function entry.
void recordShadow(ReverseEmitter &emitter, reloc::GetGlobalOp get);
/// The adjoint of a float min/max atomic with shadow `shadow`.
mlir::LogicalResult reverseMinMaxAtomic(ReverseEmitter &emitter,
                                        mlir::memref::AtomicRMWOp atomic,
                                        mlir::Value shadow);
/// A barrier replayed at the mirrored point of the reverse sweep.
void replayBarrier(ReverseEmitter &emitter, mlir::Location loc);

} // namespace hooks

/// Registers the ForwardModeOpInterface / ReverseModeOpInterface models of
/// each dialect Nabla differentiates (Implementations/<Dialect>.cpp).
void registerArithDerivativeModels(mlir::DialectRegistry &registry);
void registerFuncDerivativeModels(mlir::DialectRegistry &registry);
void registerGPUDerivativeModels(mlir::DialectRegistry &registry);
void registerMemRefDerivativeModels(mlir::DialectRegistry &registry);
void registerRelocDerivativeModels(mlir::DialectRegistry &registry);
void registerSCFDerivativeModels(mlir::DialectRegistry &registry);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_IMPLEMENTATIONS_EMITTERHOOKS_H
