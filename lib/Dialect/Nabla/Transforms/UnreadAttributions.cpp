//===- UnreadAttributions.cpp - Writes no read needs, in derivatives ------===//
//
// See UnreadAttributions.h.
//
//===----------------------------------------------------------------------===//

#include "UnreadAttributions.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

SmallVector<unsigned>
nabla::attributionOperands(Operation *request, ArrayRef<Activity> activities) {
  SmallVector<unsigned> found;
  auto kernel = dyn_cast_or_null<gpu::GPUFuncOp>(request->getParentOp());
  if (!kernel || !kernel.isKernel())
    return found;
  Block &body = kernel.getBody().front();
  // An attribution, or a view of the kernel's dynamic shared memory.
  auto isAttribution = [&](Value v) {
    if (auto view = v.getDefiningOp<memref::ViewOp>())
      return view->getBlock() == &body &&
             view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>();
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body &&
           arg.getArgNumber() >= kernel.getNumArguments();
  };
  auto usedAfter = [&](Value v) {
    for (Operation *op = request->getNextNode(); op; op = op->getNextNode()) {
      bool uses = false;
      op->walk([&](Operation *inner) {
        uses |= llvm::is_contained(inner->getOperands(), v);
      });
      if (uses)
        return true;
    }
    return false;
  };
  auto onlyZeroedBefore = [&](Value shadow) {
    for (OpOperand &use : shadow.getUses()) {
      Operation *user = use.getOwner();
      if (user == request || isa<memref::DimOp>(user))
        continue;
      auto store = dyn_cast<memref::StoreOp>(user);
      if (!store || store.getMemRef() != shadow ||
          !matchPattern(store.getValueToStore(), m_AnyZeroFloat()) ||
          !body.findAncestorOpInBlock(*user) ||
          !body.findAncestorOpInBlock(*user)->isBeforeInBlock(request))
        return false;
    }
    return true;
  };
  unsigned next = 0;
  for (auto [index, activity] : llvm::enumerate(activities)) {
    if (next >= request->getNumOperands())
      break;
    Value primal = request->getOperand(next++);
    if (!hasShadow(activity))
      continue;
    if (next >= request->getNumOperands())
      break;
    Value shadow = request->getOperand(next++);
    if (isa<MemRefType>(primal.getType()) && isAttribution(primal) &&
        isAttribution(shadow) && primal != shadow && !usedAfter(primal) &&
        !usedAfter(shadow) && onlyZeroedBefore(shadow))
      found.push_back(index);
  }
  return found;
}

/// True if every use of `value`, through memory-free ops without regions,
/// ends in a store of it into `buffer`.
static bool feedsOnlyStoresInto(Value value, Value buffer) {
  SmallVector<Value> worklist{value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto store = dyn_cast<memref::StoreOp>(user)) {
        if (store.getMemRef() != buffer ||
            use.getOperandNumber() != store.getValueMutable()
                                          .getOperandNumber())
          return false;
        continue;
      }
      // A terminator hands the value on (an scf.if's results, a loop's
      // iter_args): live.
      if (user->getNumRegions() || user->hasTrait<OpTrait::IsTerminator>() ||
          !isMemoryEffectFree(user))
        return false;
      llvm::append_range(worklist, user->getResults());
    }
  }
  return true;
}

bool nabla::eraseUnreadAttributions(ArrayRef<Value> buffers) {
  bool erased = false;
  for (Value buffer : buffers) {
    if (!isa<MemRefType>(buffer.getType()))
      continue;
    SmallVector<memref::StoreOp> stores;
    bool unread = true;
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && store.getMemRef() == buffer &&
          store.getValueToStore() != buffer) {
        stores.push_back(store);
        continue;
      }
      auto load = dyn_cast<memref::LoadOp>(user);
      if (!load || !feedsOnlyStoresInto(load.getResult(), buffer)) {
        unread = false;
        break;
      }
    }
    if (!unread || stores.empty())
      continue;
    for (memref::StoreOp store : stores)
      store.erase();
    erased = true;
  }
  return erased;
}

/// True if `op` is a barrier-only region-free op or memory-free.
static bool isBarrierOrFree(Operation &op) {
  return isa<gpu::BarrierOp>(op) ||
         (op.getNumRegions() == 0 && isMemoryEffectFree(&op));
}

bool nabla::mergeAdjacentBarriers(func::FuncOp function) {
  bool changed = false;
  // Loops of barriers: one barrier (every thread runs the same count).
  SmallVector<scf::ForOp> loops;
  function.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0 || *ub <= *lb ||
        loop.getNumResults() ||
        !llvm::all_of(loop.getBody()->without_terminator(), isBarrierOrFree) ||
        llvm::none_of(loop.getBody()->without_terminator(),
                      [](Operation &op) { return isa<gpu::BarrierOp>(op); }))
      continue;
    OpBuilder b(loop);
    gpu::BarrierOp::create(b, loop.getLoc());
    loop.erase();
    changed = true;
  }
  // A barrier right after another (memory-free ops between) orders nothing.
  SmallVector<gpu::BarrierOp> redundant;
  function.walk([&](Block *block) {
    Operation *previous = nullptr;
    for (Operation &op : *block) {
      if (isa<gpu::BarrierOp>(op)) {
        if (previous)
          redundant.push_back(cast<gpu::BarrierOp>(op));
        previous = &op;
      } else if (!isBarrierOrFree(op)) {
        previous = nullptr;
      }
    }
  });
  for (gpu::BarrierOp barrier : redundant)
    barrier.erase();
  return changed || !redundant.empty();
}
