//===- MemRef.cpp - Derivatives of memref loads, stores, atomics, allocas -===//
//
// Enzyme's memory semantics: a differentiated buffer has a shadow of the
// same shape holding tangents (forward mode) or adjoints (reverse mode).
//
//   op                  forward mode                 reverse sweep
//   load x = M[i]       dx = S[i]                    S[i] += dx (GPU-correct)
//   store M[i] = v      S[i] = dv                    dv += S[i]; S[i] = 0 (one
//   writer) atomic addf M[i]    atomic S[i] += dv            dv += S[i] atomic
//   max/min      after the barrier, the       the atomic that stored the
//                       winner writes its tangent    final value takes S[i]
//   alloca              a zeroed shadow allocation   (forward sweep) likewise
//
// Views of shadowed buffers (ViewLikeOpInterface) are the emitters' own: the
// shadow gets the same view.
//
//===----------------------------------------------------------------------===//

#include "EmitterHooks.h"

#include "../ActivityAnalysis.h"
#include "../DerivativeRules.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace nabla;

namespace {

struct LoadForward
    : public ForwardModeOpInterface::ExternalModel<LoadForward,
                                                   memref::LoadOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    auto load = cast<memref::LoadOp>(op);
    emitter.clonePrimal(op);
    if (Value sh = emitter.shadow(load.getMemRef()))
      if (emitter.isVaried(load.getResult()))
        emitter.setTangent(
            load.getResult(),
            memref::LoadOp::create(emitter.builder(), load.getLoc(), sh,
                                   emitter.primals(load.getIndices())));
    return success();
  }
};

struct LoadReverse
    : public ReverseModeOpInterface::ExternalModel<LoadReverse,
                                                   memref::LoadOp> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    auto load = cast<memref::LoadOp>(op);
    Value sh = emitter.shadow(load.getMemRef());
    Value d = emitter.adjoint(load.getResult());
    if (!d || !sh)
      return success();
    return emitter.accumulate(op, sh, emitter.primals(load.getIndices()), d);
  }
};

struct StoreForward
    : public ForwardModeOpInterface::ExternalModel<StoreForward,
                                                   memref::StoreOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    auto store = cast<memref::StoreOp>(op);
    emitter.clonePrimal(op);
    Value sh = emitter.shadow(store.getMemRef());
    if (!sh)
      return emitter.checkUnshadowedWrite(op, store.getValue());
    if (isFloatLike(store.getValue().getType()))
      memref::StoreOp::create(
          emitter.builder(), store.getLoc(),
          emitter.tangentOrZero(store.getValue(), store.getLoc()), sh,
          emitter.primals(store.getIndices()));
    return success();
  }
};

struct StoreReverse
    : public ReverseModeOpInterface::ExternalModel<StoreReverse,
                                                   memref::StoreOp> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    auto store = cast<memref::StoreOp>(op);
    OpBuilder &b = emitter.builder();
    Location loc = store.getLoc();
    Value sh = emitter.shadow(store.getMemRef());
    if (!sh)
      return emitter.checkUnshadowedWrite(op, store.getValue());
    if (!isFloatLike(store.getValue().getType()))
      return success();
    SmallVector<Value> indices = emitter.primals(store.getIndices());
    // A constant store discards the element's adjoint: every writer may
    // zero it (deterministic mode also discards the writer's pending
    // contributions through the read).
    if (!emitter.isVaried(store.getValue()) && !emitter.isDeterministic()) {
      memref::StoreOp::create(
          b, loc, createZero(b, loc, store.getValue().getType()), sh, indices);
      return success();
    }
    FailureOr<Value> d = emitter.takeStoredAdjoint(op, sh, indices);
    if (failed(d))
      return failure();
    if (emitter.isVaried(store.getValue()))
      emitter.addAdjoint(store.getValue(), *d);
    return success();
  }
};

struct AtomicForward
    : public ForwardModeOpInterface::ExternalModel<AtomicForward,
                                                   memref::AtomicRMWOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    auto atomic = cast<memref::AtomicRMWOp>(op);
    emitter.clonePrimal(op);
    Value sh = emitter.shadow(atomic.getMemref());
    if (!sh)
      return emitter.checkUnshadowedWrite(op, atomic.getValue());
    if (isFloatMinMaxAtomic(atomic.getKind())) {
      if (failed(checkMinMaxAtomic(atomic, "forward", /*sameBlock=*/true)))
        return failure();
      hooks::deferMinMaxTangent(emitter, atomic, sh);
      return success();
    }
    if (atomic.getKind() != arith::AtomicRMWKind::addf)
      return emitter.unsupported(op);
    memref::AtomicRMWOp::create(
        emitter.builder(), atomic.getLoc(), arith::AtomicRMWKind::addf,
        emitter.tangentOrZero(atomic.getValue(), atomic.getLoc()), sh,
        emitter.primals(atomic.getIndices()));
    return success();
  }
};

struct AtomicReverse
    : public ReverseModeOpInterface::ExternalModel<AtomicReverse,
                                                   memref::AtomicRMWOp> {
  LogicalResult emitReverseSweep(Operation *op, ReverseEmitter &emitter) const {
    auto atomic = cast<memref::AtomicRMWOp>(op);
    Value sh = emitter.shadow(atomic.getMemref());
    if (!sh)
      return emitter.checkUnshadowedWrite(op, atomic.getValue());
    if (emitter.adjoint(atomic.getResult()))
      return emitter.unsupported(op);
    if (isFloatMinMaxAtomic(atomic.getKind()))
      return hooks::reverseMinMaxAtomic(emitter, atomic, sh);
    if (atomic.getKind() != arith::AtomicRMWKind::addf)
      return emitter.unsupported(op);
    if (emitter.isVaried(atomic.getValue()))
      emitter.addAdjoint(
          atomic.getValue(),
          emitter.readShadow(atomic.getLoc(), atomic.getMemref(), sh,
                             emitter.primals(atomic.getIndices())));
    return success();
  }
};

struct AllocaForward
    : public ForwardModeOpInterface::ExternalModel<AllocaForward,
                                                   memref::AllocaOp> {
  LogicalResult emitForwardMode(Operation *op, ForwardEmitter &emitter) const {
    auto alloca = cast<memref::AllocaOp>(op);
    emitter.clonePrimal(op);
    if (emitter.isShadowed(alloca.getResult()))
      emitter.setShadow(
          alloca.getResult(),
          createZeroedAllocation(emitter.builder(), alloca,
                                 emitter.primals(alloca.getDynamicSizes())));
    return success();
  }
};

struct AllocaReverse
    : public ReverseModeOpInterface::ExternalModel<AllocaReverse,
                                                   memref::AllocaOp> {
  LogicalResult emitForwardSweep(Operation *op, ReverseEmitter &emitter) const {
    auto alloca = cast<memref::AllocaOp>(op);
    if (!emitter.clonePrimal(op) || !emitter.isShadowed(alloca.getResult()))
      return success();
    return hooks::allocaShadow(emitter, alloca);
  }
  LogicalResult emitReverseSweep(Operation *, ReverseEmitter &) const {
    return success();
  }
};

} // namespace

void nabla::registerMemRefDerivativeModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, memref::MemRefDialect *) {
    memref::LoadOp::attachInterface<LoadForward, LoadReverse>(*context);
    memref::StoreOp::attachInterface<StoreForward, StoreReverse>(*context);
    memref::AtomicRMWOp::attachInterface<AtomicForward, AtomicReverse>(
        *context);
    memref::AllocaOp::attachInterface<AllocaForward, AllocaReverse>(*context);
  });
}
