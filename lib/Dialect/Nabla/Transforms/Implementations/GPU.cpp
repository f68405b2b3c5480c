//===- GPU.cpp - Derivatives of barriers and collectives ------------------===//
//
// gpu.barrier: forward mode writes the deferred tangents of float min/max
// atomics after it; the reverse sweep replays it at the mirrored point
// (adjoints written to workgroup shadows before it are read by other threads
// after). gpu.shuffle, gpu.subgroup_reduce and gpu.all_reduce: their
// tangents and adjoints are collectives over the same lanes
// (GPUDerivatives.cpp).
//
//===----------------------------------------------------------------------===//

#include "EmitterHooks.h"

#include "../GPUDerivatives.h"

#include "nabla/Dialect/Nabla/IR/NablaDialect.h"
#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace nabla;

namespace {

struct BarrierForward
    : public ForwardModeOpInterface::ExternalModel<BarrierForward,
                                                   gpu::BarrierOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    emitter.clonePrimal(op);
    hooks::emitMinMaxTangents(emitter, op->getBlock(), op->getLoc());
    return success();
  }
};

struct BarrierReverse
    : public ReverseModeOpInterface::ExternalModel<BarrierReverse,
                                                   gpu::BarrierOp> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    hooks::replayBarrier(emitter, op->getLoc());
    return success();
  }
};

/// __syncwarp: the lanes' adjoint accumulations before the mirrored point
/// are read by other lanes of the subgroup after it.
struct SubgroupBarrierForward
    : public ForwardModeOpInterface::ExternalModel<SubgroupBarrierForward,
                                                   SubgroupBarrierOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    emitter.clonePrimal(op);
    return success();
  }
};

struct SubgroupBarrierReverse
    : public ReverseModeOpInterface::ExternalModel<SubgroupBarrierReverse,
                                                   SubgroupBarrierOp> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    SubgroupBarrierOp::create(emitter.builder(), op->getLoc());
    return success();
  }
};

/// A fence orders the thread's own accesses: kept where it stands (forward
/// mode: tangents follow the primal's data flow in the primal's order). In
/// reverse mode a workgroup fence is replayed at the mirrored point; a
/// device or system fence is how blocks of one launch hand data to each
/// other (the last-block reduction), and the reverse sweep cannot make one
/// block's adjoints wait for another's: a located error, never a gradient
/// read before it is accumulated.
struct MemoryFenceForward
    : public ForwardModeOpInterface::ExternalModel<MemoryFenceForward,
                                                   MemoryFenceOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    emitter.clonePrimal(op);
    return success();
  }
};

struct MemoryFenceReverse
    : public ReverseModeOpInterface::ExternalModel<MemoryFenceReverse,
                                                   MemoryFenceOp> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    auto fence = cast<MemoryFenceOp>(op);
    if (fence.getScope() != "workgroup")
      return op->emitOpError("cannot be differentiated in reverse mode: a ")
             << fence.getScope()
             << "-scope fence (__threadfence) orders data that blocks of one "
                "launch pass each other, and the reverse sweep cannot order "
                "their adjoints; split the kernel at the fence into two "
                "launches";
    MemoryFenceOp::create(emitter.builder(), op->getLoc(),
                          fence.getScopeAttr());
    return success();
  }
};

template <typename OpTy>
struct CollectiveForward
    : public ForwardModeOpInterface::ExternalModel<CollectiveForward<OpTy>,
                                                   OpTy> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    Operation *clone = emitter.clonePrimal(op);
    if (!emitter.isVaried(op->getResult(0)))
      return success();
    FailureOr<Value> tangent = emitCollectiveTangent(
        emitter.builder(), op, clone->getOperands(), clone->getResult(0),
        emitter.tangentOrZero(op->getOperand(0), op->getLoc()));
    if (failed(tangent))
      return failure();
    emitter.setTangent(op->getResult(0), *tangent);
    return success();
  }
};

template <typename OpTy>
struct CollectiveReverse
    : public ReverseModeOpInterface::ExternalModel<CollectiveReverse<OpTy>,
                                                   OpTy> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    Value d = emitter.adjoint(op->getResult(0));
    if (!d || !emitter.isVaried(op->getOperand(0)))
      return success();
    FailureOr<Value> contribution = emitCollectiveAdjoint(
        emitter.builder(), op, emitter.primals(op->getOperands()),
        emitter.primal(op->getResult(0)), d);
    if (failed(contribution))
      return failure();
    emitter.addAdjoint(op->getOperand(0), *contribution);
    return success();
  }
};

template <typename OpTy> void attachCollective(MLIRContext &context) {
  OpTy::template attachInterface<CollectiveForward<OpTy>,
                                 CollectiveReverse<OpTy>>(context);
}

} // namespace

void nabla::registerGPUDerivativeModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::BarrierOp::attachInterface<BarrierForward, BarrierReverse>(*context);
    attachCollective<gpu::ShuffleOp>(*context);
    attachCollective<gpu::SubgroupReduceOp>(*context);
    attachCollective<gpu::AllReduceOp>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, NablaDialect *) {
    SubgroupBarrierOp::attachInterface<SubgroupBarrierForward,
                                       SubgroupBarrierReverse>(*context);
    MemoryFenceOp::attachInterface<MemoryFenceForward, MemoryFenceReverse>(
        *context);
  });
}
