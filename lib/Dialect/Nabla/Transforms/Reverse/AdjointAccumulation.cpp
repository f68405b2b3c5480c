//===- AdjointAccumulation.cpp - Adjoint accumulation into shadows --------===//
//
// GPU-correct accumulation of adjoints into shadow memory, and its dual, the
// taking of a stored element's adjoint: plain loads and stores where the
// access is proven thread-exclusive (ExclusiveAccess.cpp, with a run-time
// check of the launch's shape), float atomics otherwise (an add; an exchange
// with zero, so that exactly one of the threads storing to an element gets
// its adjoint).
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "ActivityAnalysis.h"
#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "RecordShadows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace nabla;

/// Accumulates `value` into `shadowMemref[indices]`: a plain
/// load-add-store when the access is thread-exclusive (a private shadow,
/// the thread id into a workgroup buffer, or the global id into an
/// argument), an atomic add otherwise. Thread and global ids along x are
/// unique only in 1-D blocks (and grids): that is checked when the kernel
/// runs, with the atomic as the fallback.
LogicalResult VJPEmitter::accumulate(Operation *src, Value shadowMemref,
                                     ValueRange indices, Value value) {
  Location loc = src->getLoc();
  // Views (subviews, casts) map indices injectively onto their buffer.
  bool argument = isa<BlockArgument>(getViewSource(shadowMemref));
  auto plain = [&] {
    Value old = memref::LoadOp::create(b, loc, shadowMemref, indices);
    memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, value),
                            shadowMemref, indices);
  };
  auto atomic = [&] {
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value,
                                shadowMemref, indices);
  };
  // Private shadows (of allocations) belong to the thread.
  if (getAllocation(shadowMemref)) {
    plain();
    return success();
  }
  // Another dialect's read: its indices are not analysed, so other threads
  // may reach the element.
  auto read = dyn_cast<memref::LoadOp>(src);
  if (!read) {
    if (ordering->enabled)
      return src->emitOpError(
          "reads differentiated memory that other threads may reach: "
          "deterministic=true orders the adjoints of memref.load only");
    atomic();
    return success();
  }
  // Deterministic mode orders broadcast elements (a uniform index) whatever
  // guards them: a launch-shape check would fall back to an atomic.
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      read.getMemRefType().getMemorySpace());
  bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
  if (ordering->enabled && llvm::all_of(read.getIndices(), [&](Value i) {
        return isUniform(i, workgroup);
      }))
    return accumulateOrdered(src, value);
  FailureOr<Exclusivity> proof =
      proveExclusive(src, read.getMemRef(), read.getIndices());
  // An element the thread also stores plainly between the same barriers is
  // its own there when no other thread stores to it: the store's index (or
  // guard) identifies the thread. Several threads storing one value to one
  // element (every lane writing its warp's sum) is a race the primal
  // survives, the adjoint would not.
  bool ownInterval =
      !ordering->enabled && succeeded(proof) && storesInSameInterval(src);
  bool byThread = succeeded(proof) && argument;
  if (!ownInterval && byThread && readElsewhere(src)) {
    if (remarks)
      src->emitRemark("adjoint accumulation keeps an atomic: other reads of "
                      "the buffer at other indices can meet this thread's "
                      "element");
    byThread = false;
  } else if (!ownInterval && !byThread && remarks && !ordering->enabled) {
    src->emitRemark("adjoint accumulation keeps an atomic: the index is "
                    "not proven to be an injective function of the "
                    "global thread id");
  }
  if (!ownInterval && !byThread) {
    if (ordering->enabled)
      return accumulateOrdered(src, value);
    atomic();
    return success();
  }
  // A read-modify-write of the element by several threads would race in the
  // primal: the launch keeps it exclusive, whatever its shape.
  if (proof->isStatic() || accessedAtSamePlace<memref::StoreOp>(src)) {
    plain();
    return success();
  }
  auto exclusive = scf::IfOp::create(b, loc, emitExclusivityCheck(loc, *proof),
                                     /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(exclusive.thenBlock());
  plain();
  b.setInsertionPointToStart(exclusive.elseBlock());
  atomic();
  return success();
}

FailureOr<Value> VJPEmitter::takeStoredAdjoint(Operation *writer,
                                               Value shadowMemref,
                                               ValueRange indices) {
  Location loc = writer->getLoc();
  Type type = cast<MemRefType>(shadowMemref.getType()).getElementType();
  auto store = dyn_cast<memref::StoreOp>(writer);
  auto plain = [&]() -> Value {
    auto d = memref::LoadOp::create(b, loc, shadowMemref, indices);
    if (store)
      shadowReads.push_back({d, store.getMemRef()});
    memref::StoreOp::create(b, loc, createZero(b, loc, type), shadowMemref,
                            indices);
    return d;
  };
  auto exchange = [&]() -> Value {
    return memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign,
                                       createZero(b, loc, type), shadowMemref,
                                       indices);
  };
  if (getAllocation(shadowMemref))
    return plain();
  // Another dialect's write: its indices are not analysed, so several
  // threads may have stored to the element.
  if (!store) {
    if (ordering->enabled || !isa<FloatType>(type))
      return writer->emitOpError(
          "writes differentiated memory that other threads may reach: its "
          "adjoint must go to one writer, which needs an atomic exchange of "
          "a float (and deterministic=true supports memref.store only)");
    return exchange();
  }
  FailureOr<Exclusivity> proof =
      proveExclusive(store, store.getMemRef(), store.getIndices());
  // A store of an element the thread also reads at the same place is a
  // read-modify-write, which several threads would race on in the primal.
  if (succeeded(proof) &&
      (proof->isStatic() || accessedAtSamePlace<memref::LoadOp>(store)))
    return plain();
  if (!isa<FloatType>(type))
    return store.emitOpError("stores a differentiated ")
           << type
           << " that several threads may store to one element: its adjoint "
              "must go to one of them, which needs an atomic exchange of a "
              "scalar";
  if (failed(proof)) {
    if (ordering->enabled)
      return store.emitOpError(
          "may be executed by several threads at one element (its index is "
          "not an injective function of the thread id, nor is the store "
          "guarded to one thread): deterministic=true cannot choose which "
          "of them takes the element's adjoint; store from one thread "
          "(`if (threadIdx.x == 0)`) or at a thread-indexed element");
    if (remarks)
      store->emitRemark(
          "the adjoint of this store is taken with an atomic exchange: "
          "several threads may store to the element (its index is not "
          "proven an injective function of the thread id, nor the store "
          "guarded to one thread)");
    return exchange();
  }
  auto exclusive = scf::IfOp::create(b, loc, TypeRange{type},
                                     emitExclusivityCheck(loc, *proof),
                                     /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(exclusive.thenBlock());
  scf::YieldOp::create(b, loc, plain());
  b.setInsertionPointToStart(exclusive.elseBlock());
  scf::YieldOp::create(b, loc, exchange());
  return exclusive.getResult(0);
}

template <typename AccessOp>
bool VJPEmitter::accessedAtSamePlace(Operation *access) {
  Value memref = access->getOperand(isa<memref::StoreOp>(access) ? 1 : 0);
  ValueRange indices = isa<memref::StoreOp>(access)
                           ? cast<memref::StoreOp>(access).getIndices()
                           : cast<memref::LoadOp>(access).getIndices();
  auto function = access->getParentOfType<func::FuncOp>();
  WalkResult found = function.walk([&](AccessOp other) {
    if (other.getMemRef() == memref && other.getIndices() == indices)
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}
template bool VJPEmitter::accessedAtSamePlace<memref::LoadOp>(Operation *);
template bool VJPEmitter::accessedAtSamePlace<memref::StoreOp>(Operation *);

/// True if the function also reads the buffer `src` loads from at other
/// indices: threads can then meet at one element through different reads
/// (x[i] of thread i, x[i - 1] of thread i + 1), so the thread-indexed read's
/// accumulation is not exclusive. Broadcast reads the ordered accumulation
/// takes publish only after a barrier and do not count.
bool VJPEmitter::readElsewhere(Operation *src) {
  auto read = cast<memref::LoadOp>(src);
  if (!loadsCollected) {
    loadsCollected = true;
    src->getParentOfType<func::FuncOp>().walk([&](memref::LoadOp load) {
      loadsByBuffer[getViewSource(load.getMemRef())].push_back(load);
    });
  }
  return llvm::any_of(
      loadsByBuffer[getViewSource(read.getMemRef())],
      [&](memref::LoadOp other) {
        if (other == read ||
            (other.getMemRef() == read.getMemRef() &&
             llvm::equal(other.getIndices(), read.getIndices())))
          return false;
        auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
            other.getMemRefType().getMemorySpace());
        bool workgroup =
            space && space.getValue() == gpu::AddressSpace::Workgroup;
        // Another lane of the same packed access (x[8 i + k], k < 8).
        if (other.getMemRef() == read.getMemRef() &&
            apartAcrossThreads(other.getIndices(), read.getIndices(),
                               workgroup))
          return false;
        auto arg = dyn_cast<BlockArgument>(other.getMemRef());
        return !(ordering->enabled && arg && arg.getOwner() == primalBody &&
                 llvm::all_of(other.getIndices(), [&](Value i) {
                   return isUniform(i, workgroup);
                 }));
      });
}

bool VJPEmitter::storesInSameInterval(Operation *load) {
  auto read = dyn_cast<memref::LoadOp>(load);
  if (!read)
    return false;
  auto containsBarrier = [](Operation *op) {
    return op
        ->walk([](Operation *inner) {
          return isa<gpu::BarrierOp>(inner) || isGPUCollective(inner)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  };
  for (Operation &op : *load->getBlock()) {
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store || store.getMemRef() != read.getMemRef() ||
        store.getIndices() != read.getIndices())
      continue;
    Operation *first =
        load->isBeforeInBlock(store) ? load : store.getOperation();
    Operation *last = first == load ? store.getOperation() : load;
    bool separated = false;
    for (Operation *between = first->getNextNode(); between != last;
         between = between->getNextNode())
      separated |= containsBarrier(between);
    if (!separated)
      return true;
  }
  return false;
}
