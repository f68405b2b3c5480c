//===- PromotePrivateAllocs.cpp - Fixed-size heap allocations to private --===//
//
// A `memref.alloc` in device code is a per-thread heap allocation (CUDA's
// in-kernel `malloc`). One of static shape whose memref stays in its
// function becomes a `memref.alloca` in its place: private memory, which
// every target has, where Vulkan and Metal have no device heap at all.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/OptionNames.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace nabla {
#define GEN_PASS_DEF_PROMOTEPRIVATEALLOCS
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// The default memory space, or GPU private memory.
bool isThreadMemory(MemRefType type) {
  Attribute space = type.getMemorySpace();
  if (!space)
    return true;
  if (auto gpuSpace = dyn_cast<gpu::AddressSpaceAttr>(space))
    return gpuSpace.getValue() == gpu::AddressSpace::Private;
  if (auto integer = dyn_cast<IntegerAttr>(space))
    return integer.getInt() == 0;
  return false;
}

/// The bytes of a statically shaped memref of scalars or vectors of them
/// (index counted as 64 bits); std::nullopt for other element types.
std::optional<int64_t> getByteSize(MemRefType type) {
  Type element = type.getElementType();
  int64_t count = type.getNumElements();
  if (auto vector = dyn_cast<VectorType>(element);
      vector && vector.hasStaticShape()) {
    count *= vector.getNumElements();
    element = vector.getElementType();
  }
  unsigned bits = element.isIndex()        ? 64
                  : element.isIntOrFloat() ? element.getIntOrFloatBitWidth()
                                           : 0;
  if (bits == 0)
    return std::nullopt;
  return count * ((bits + 7) / 8);
}

/// Whether the memref `value` (or a view of it) leaves its function or the
/// region it was defined in: a terminator that passes it on (a return, a
/// yield) would make one allocation per iteration observable. Collects the
/// deallocations of it and its views.
bool escapes(Value value, SmallVectorImpl<Operation *> &deallocs) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<OpTrait::IsTerminator>())
        return true;
      if (isa<memref::DeallocOp>(user))
        deallocs.push_back(user);
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == current)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

struct PromotePrivateAllocs
    : public nabla::SuggestOptionNames<
          nabla::impl::PromotePrivateAllocsBase<PromotePrivateAllocs>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    SmallVector<std::pair<memref::AllocOp, SmallVector<Operation *>>> allocs;
    getOperation().walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      SmallVector<Operation *> deallocs;
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !isThreadMemory(type) || escapes(alloc.getResult(), deallocs))
        return;
      std::optional<int64_t> bytes = getByteSize(type);
      if (!bytes || *bytes > int64_t(maxBytes))
        return;
      if (alloc->getParentOfType<FunctionOpInterface>())
        allocs.push_back({alloc, std::move(deallocs)});
    });
    // In place: memory allocated in a loop body stays the iteration's own,
    // which reverse mode recomputes from; the kernel inliner later moves
    // fixed-size private memory to the kernel's entry.
    for (auto &[alloc, deallocs] : allocs) {
      OpBuilder builder(alloc);
      auto alloca = memref::AllocaOp::create(
          builder, alloc.getLoc(), alloc.getType(), alloc.getAlignmentAttr());
      for (Operation *dealloc : deallocs)
        dealloc->erase();
      alloc.getResult().replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};

} // namespace
