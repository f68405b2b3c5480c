//===- PromoteLoopElements.cpp - Loop-invariant elements as iter_args -----===//
//
// `for k { x[i] = f(x[i], k) }` reads memory the loop overwrites: reversing it
// by recomputation would read the final x[i] instead of each iteration's. As
// a loop-carried value (`%v = x[i]; for k iter_args(%a = %v) { yield f(%a) };
// x[i] = %r`) the element is part of the loop state that checkpoints hold,
// and a tape needs one slot less. Only elements that the loop reaches
// through body-level loads and stores of the same memref and indices, with no
// other access to the buffer, no barrier, collective or call in the loop
// (another thread or callee could observe the element meanwhile), qualify.
//
//===----------------------------------------------------------------------===//

#include "PromoteLoopElements.h"

#include "ActivityAnalysis.h"
#include "GPUDerivatives.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nabla;

namespace {

/// The memref and indices of a load or store.
std::pair<Value, ValueRange> accessOf(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return {load.getMemRef(), load.getIndices()};
  auto store = cast<memref::StoreOp>(op);
  return {store.getMemRef(), store.getIndices()};
}

bool isDefinedOutside(Value v, scf::ForOp loop) {
  return !loop->isAncestor(v.getParentRegion()->getParentOp());
}

/// True if something in `loop` may let another thread or a callee see its
/// memory mid-loop, or has effects the analysis cannot see.
bool isOpaque(scf::ForOp loop) {
  return loop
      ->walk([&](Operation *op) {
        if (op == loop.getOperation())
          return WalkResult::advance();
        if (isa<gpu::BarrierOp, CallOpInterface>(op) || isGPUCollective(op))
          return WalkResult::interrupt();
        if (!isa<MemoryEffectOpInterface>(op) &&
            !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// The body-level loads and stores of the element `store` writes, in order,
/// if they are the loop's only accesses to its buffer.
SmallVector<Operation *> elementAccesses(scf::ForOp loop,
                                         memref::StoreOp store) {
  Value memref = store.getMemRef();
  ValueRange indices = store.getIndices();
  if (!isDefinedOutside(memref, loop) || !llvm::all_of(indices, [&](Value i) {
        return isDefinedOutside(i, loop);
      }))
    return {};
  Value base = getViewSource(memref);
  SmallVector<Operation *> accesses;
  bool exclusive = true;
  loop->walk([&](Operation *op) {
    if (op == loop.getOperation())
      return WalkResult::advance();
    bool touches = llvm::any_of(op->getOperands(), [&](Value v) {
      return isa<BaseMemRefType>(v.getType()) && getViewSource(v) == base;
    });
    if (!touches)
      return WalkResult::advance();
    if (isa<memref::LoadOp, memref::StoreOp>(op) &&
        op->getBlock() == loop.getBody()) {
      auto [m, i] = accessOf(op);
      if (m == memref && llvm::equal(i, indices)) {
        accesses.push_back(op);
        return WalkResult::advance();
      }
    }
    exclusive = false;
    return WalkResult::interrupt();
  });
  if (!exclusive)
    return {};
  return accesses;
}

/// Promotes one element of `loop`; returns false when none qualifies.
bool promoteOne(scf::ForOp &loop) {
  memref::StoreOp store;
  SmallVector<Operation *> accesses;
  for (auto candidate : loop.getBody()->getOps<memref::StoreOp>()) {
    accesses = elementAccesses(loop, candidate);
    if (!accesses.empty()) {
      store = candidate;
      break;
    }
  }
  if (!store)
    return false;
  Location loc = store.getLoc();
  Value memref = store.getMemRef();
  SmallVector<Value> indices(store.getIndices());
  Type type = store.getValue().getType();
  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  // The loop runs at least once: only then was the element touched (its
  // index may be out of bounds otherwise).
  Value runs =
      arith::CmpIOp::create(rewriter, loc,
                            loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                                  : arith::CmpIPredicate::slt,
                            loop.getLowerBound(), loop.getUpperBound());
  auto initial = scf::IfOp::create(rewriter, loc, TypeRange{type}, runs,
                                   /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(initial.thenBlock());
    // The load keeps the location of the loop's first access to the element.
    scf::YieldOp::create(rewriter, loc,
                         memref::LoadOp::create(rewriter,
                                                accesses.front()->getLoc(),
                                                memref, indices)
                             .getResult());
    rewriter.setInsertionPointToStart(initial.elseBlock());
    scf::YieldOp::create(
        rewriter, loc,
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(type))
            .getResult());
  }
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, initial.getResults(), /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument> carried) {
        Value current = carried.front();
        for (Operation *access : accesses) {
          if (auto load = dyn_cast<memref::LoadOp>(access))
            load.getResult().replaceAllUsesWith(current);
          else
            current = cast<memref::StoreOp>(access).getValue();
        }
        return SmallVector<Value>{current};
      });
  if (failed(replaced))
    return false;
  loop = cast<scf::ForOp>(replaced->getOperation());
  for (Operation *access : accesses)
    rewriter.eraseOp(access);
  rewriter.setInsertionPointAfter(loop);
  auto final = scf::IfOp::create(rewriter, loc, runs, /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(final.thenBlock());
  memref::StoreOp::create(rewriter, loc, loop.getResults().back(), memref,
                          indices);
  return true;
}

} // namespace

void nabla::promoteLoopElements(func::FuncOp function) {
  SmallVector<scf::ForOp> loops;
  function.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops) {
    if (isOpaque(loop))
      continue;
    while (promoteOne(loop)) {
    }
  }
}
