//===- ROCDLPrivateAllocas.cpp - AMDGPU stack slots in private memory -----===//
//
// AMDGPU keeps stack slots in the private address space (5). The upstream
// memref-to-LLVM lowering gives `memref.alloca` the memref's address space,
// 0 for a plain memref, and the AMDGPU back end then aborts instruction
// selection. This pass does what clang does for AMDGPU: allocate in address
// space 5 and hand the users a generic pointer through an addrspacecast.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace nabla {
#define GEN_PASS_DEF_ROCDLPRIVATEALLOCAS
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// AMDGPU's private (scratch) address space.
constexpr unsigned kPrivateAddressSpace = 5;

struct ROCDLPrivateAllocas
    : public nabla::impl::ROCDLPrivateAllocasBase<ROCDLPrivateAllocas> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<LLVM::AllocaOp> allocas;
    getOperation().walk([&](LLVM::AllocaOp alloca) {
      if (cast<LLVM::LLVMPointerType>(alloca.getType()).getAddressSpace() == 0)
        allocas.push_back(alloca);
    });
    auto privatePointer =
        LLVM::LLVMPointerType::get(&getContext(), kPrivateAddressSpace);
    for (LLVM::AllocaOp alloca : allocas) {
      OpBuilder builder(alloca);
      // A clone keeps the element type, count, alignment and attributes.
      Operation *slot = builder.clone(*alloca);
      slot->getResult(0).setType(privatePointer);
      auto generic = LLVM::AddrSpaceCastOp::create(
          builder, alloca.getLoc(), alloca.getType(), slot->getResult(0));
      alloca.replaceAllUsesWith(generic.getResult());
      alloca.erase();
    }
  }
};

} // namespace
