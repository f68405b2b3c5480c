//===- InlineDeviceCalls.cpp - Inline device calls into kernels -----------===//
//
// SPIR-V for Vulkan (and Metal through it) has no calling convention for
// memref arguments, so device functions are inlined into kernels before the
// conversion. Every op is legal to inline here: device functions are plain
// single-threaded code of the calling thread. Recursion cannot be inlined
// and is reported; so is a multi-block callee called from inside a
// structured (single-block) region.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/InliningUtils.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace nabla {
#define GEN_PASS_DEF_INLINEDEVICECALLS
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

struct InlineDeviceCalls
    : public nabla::impl::InlineDeviceCallsBase<InlineDeviceCalls> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SymbolTable symbols(module);
    nabla::InlineEverything inliner(&getContext());

    // Inline into each kernel until no call is left; a callee seen on the
    // current inlining chain again is recursion.
    for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
      if (failed(inlineAllCalls(kernel, symbols, inliner)))
        return signalPassFailure();
      hoistStaticAllocas(kernel);
    }

    // Erase device functions no longer referenced; erasing one can leave
    // its own callees unreferenced, so repeat until nothing changes.
    bool erased = true;
    while (erased) {
      erased = false;
      for (auto func :
           llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
        if (SymbolTable::symbolKnownUseEmpty(func, module)) {
          func.erase();
          erased = true;
        }
    }
  }

  /// An inlined callee's allocations would sit in the middle of the kernel,
  /// where LLVM sees a dynamic stack allocation (which AMDGPU cannot select)
  /// and SPIR-V needs Function variables first: fixed-size ones move to the
  /// kernel's entry. Their contents start undefined either way.
  static void hoistStaticAllocas(gpu::GPUFuncOp kernel) {
    Block &entry = kernel.getBody().front();
    SmallVector<memref::AllocaOp> allocas;
    kernel.walk([&](memref::AllocaOp alloca) {
      if (alloca.getDynamicSizes().empty() &&
          alloca.getSymbolOperands().empty() &&
          !alloca->getParentOfType<memref::AllocaScopeOp>())
        allocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : llvm::reverse(allocas))
      alloca->moveBefore(&entry, entry.begin());
  }

  LogicalResult inlineAllCalls(gpu::GPUFuncOp kernel, SymbolTable &symbols,
                               nabla::InlineEverything &inliner) {
    // Calls carry the chain of callees they were inlined through.
    DenseMap<Operation *, SmallVector<StringAttr>> chains;
    while (true) {
      func::CallOp call;
      kernel.walk([&](func::CallOp op) {
        call = op;
        return WalkResult::interrupt();
      });
      if (!call)
        return success();

      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return call.emitOpError("calls @")
               << call.getCallee()
               << ", which has no body in this gpu.module and cannot be "
                  "inlined for this target";
      SmallVector<StringAttr> chain = chains.lookup(call);
      if (llvm::is_contained(chain, callee.getSymNameAttr()))
        return call.emitOpError("recursive call to @")
               << call.getCallee() << " cannot be inlined for this target";
      if (!callee.getBody().hasOneBlock() &&
          !isa<gpu::GPUFuncOp>(call->getParentOp()))
        return call.emitOpError("calls the multi-block function @")
               << call.getCallee()
               << " from inside a structured region; it cannot be inlined";

      // Record the chain on the calls the inlined body brings in.
      chain.push_back(callee.getSymNameAttr());
      DenseSet<Operation *> before;
      kernel.walk([&](func::CallOp op) { before.insert(op.getOperation()); });
      if (failed(inlineCall(inliner, nabla::cloneInlinedBody, call, callee,
                            &callee.getBody())))
        return call.emitOpError("could not inline @") << call.getCallee();
      chains.erase(call.getOperation());
      call.erase();
      kernel.walk([&](func::CallOp op) {
        if (!before.contains(op.getOperation()))
          chains[op.getOperation()] = chain;
      });
    }
  }
};

} // namespace
