//===- InternalizeDeviceFunctions.cpp - Private device functions internal -===//
//
// After the GPU-to-NVVM/ROCDL conversion, a GPU module's private functions
// are external LLVM functions with a C wrapper each, so neither LLVM nor the
// assembler may inline or drop them. Device code has no C callers: the
// wrappers go, private definitions become internal, unused ones go.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace nabla {
#define GEN_PASS_DEF_INTERNALIZEDEVICEFUNCTIONS
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

constexpr StringLiteral kWrapperPrefix = "_mlir_ciface_";

struct InternalizeDeviceFunctions
    : public nabla::impl::InternalizeDeviceFunctionsBase<
          InternalizeDeviceFunctions> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    StringRef wrapperAttr = LLVM::LLVMDialect::getEmitCWrapperAttrName();
    SymbolTable symbols(module);

    auto isPrivateDefinition = [](LLVM::LLVMFuncOp func) {
      return func.isPrivate() && !func.isExternal() &&
             !func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName());
    };

    // The wrappers of private functions: nothing on the device calls them.
    for (auto func :
         llvm::make_early_inc_range(module.getOps<LLVM::LLVMFuncOp>())) {
      if (!func.getName().starts_with(kWrapperPrefix) ||
          !isPrivateDefinition(func))
        continue;
      auto wrapped = symbols.lookup<LLVM::LLVMFuncOp>(
          func.getName().drop_front(kWrapperPrefix.size()));
      if (!wrapped || !wrapped.isPrivate() ||
          !SymbolTable::symbolKnownUseEmpty(func, module))
        continue;
      symbols.erase(func);
    }

    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!isPrivateDefinition(func))
        continue;
      func->removeAttr(wrapperAttr);
      if (func.getLinkage() == LLVM::Linkage::External)
        func.setLinkage(LLVM::Linkage::Internal);
    }

    // Private functions nothing calls any more (a callee of an erased one
    // may become unused in turn).
    bool erased = true;
    while (erased) {
      erased = false;
      for (auto func :
           llvm::make_early_inc_range(module.getOps<LLVM::LLVMFuncOp>())) {
        if (!isPrivateDefinition(func) ||
            !SymbolTable::symbolKnownUseEmpty(func, module))
          continue;
        symbols.erase(func);
        erased = true;
      }
    }
  }
};

} // namespace
