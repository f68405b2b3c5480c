//===- AdjointAccumulation.cpp - Adjoint accumulation into shadows --------===//
//
// GPU-correct accumulation of adjoints into shadow memory: a plain
// load-add-store where the access is proven thread-exclusive (with a run-time
// 1-D launch check), a float atomic add otherwise.
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
  Operation *index =
      indices.size() == 1 ? indices.front().getDefiningOp() : nullptr;
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      cast<MemRefType>(shadowMemref.getType()).getMemorySpace());
  bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
  auto globalX = dyn_cast_or_null<gpu::GlobalIdOp>(index);
  auto threadX = dyn_cast_or_null<gpu::ThreadIdOp>(index);
  // Views (subviews, casts) map indices injectively onto their buffer.
  bool argument = isa<BlockArgument>(getViewSource(shadowMemref));
  auto plain = [&] {
    Value old = memref::LoadOp::create(b, loc, shadowMemref, indices);
    memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, value),
                            shadowMemref, indices);
    return success();
  };
  auto atomic = [&] {
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value,
                                shadowMemref, indices);
    return success();
  };
  // Private shadows (of allocations) belong to the thread.
  if (getAllocation(shadowMemref))
    return plain();
  // An element the thread also stores plainly between the same barriers is
  // its own there (the primal is race-free), whatever the index.
  if (!ordering->enabled && storesInSameInterval(src))
    return plain();
  bool byThread = (globalX && globalX.getDimension() == gpu::Dimension::x &&
                   argument && !workgroup) ||
                  (threadX && threadX.getDimension() == gpu::Dimension::x &&
                   workgroup && argument);
  if (byThread && readElsewhere(src)) {
    if (remarks)
      src->emitRemark("adjoint accumulation keeps an atomic: other reads of "
                      "the buffer at other indices can meet this thread's "
                      "element");
    byThread = false;
  } else if (!byThread && remarks && !ordering->enabled) {
    src->emitRemark("adjoint accumulation keeps an atomic: the index is "
                    "not proven to be an injective function of the "
                    "global thread id");
  }
  if (!byThread) {
    if (ordering->enabled)
      return accumulateOrdered(src, value);
    return atomic();
  }
  // A plain store at the same place in the primal already requires the
  // launch to keep it thread-exclusive (else the primal races).
  if (primalStoresAtSamePlace(src))
    return plain();
  auto oneDimensional = scf::IfOp::create(
      b, loc, isOneDimensionalLaunch(loc, /*withGrid=*/!workgroup),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(oneDimensional.thenBlock());
  (void)plain();
  b.setInsertionPointToStart(oneDimensional.elseBlock());
  return atomic();
}

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
        auto arg = dyn_cast<BlockArgument>(other.getMemRef());
        return !(ordering->enabled && arg && arg.getOwner() == primalBody &&
                 llvm::all_of(other.getIndices(), [&](Value i) {
                   return isUniform(i, workgroup);
                 }));
      });
}

/// True if the function stores, non-atomically, to the element `load`
/// reads (same buffer through views, same index values).
bool VJPEmitter::primalStoresAtSamePlace(Operation *load) {
  auto read = dyn_cast<memref::LoadOp>(load);
  if (!read)
    return false;
  Value buffer = getViewSource(read.getMemRef());
  auto function = load->getParentOfType<func::FuncOp>();
  WalkResult found = function.walk([&](memref::StoreOp store) {
    if (getViewSource(store.getMemRef()) == buffer &&
        store.getMemRef() == read.getMemRef() &&
        store.getIndices() == read.getIndices())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
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

/// True when the block (and, `withGrid`, the grid) is 1-D along x.
Value VJPEmitter::isOneDimensionalLaunch(Location loc, bool withGrid) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value result;
  auto require = [&](Value size) {
    Value unit =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one);
    result = result ? arith::AndIOp::create(b, loc, result, unit) : unit;
  };
  for (gpu::Dimension d : {gpu::Dimension::y, gpu::Dimension::z}) {
    require(gpu::BlockDimOp::create(b, loc, d));
    if (withGrid)
      require(gpu::GridDimOp::create(b, loc, d));
  }
  return result;
}
