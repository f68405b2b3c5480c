//===- RestoreHostCode.cpp - Host code back once kernels are binaries -----===//
//
// nabla-restore-host-code: the host code nabla-set-aside-host-code put in the
// nested module (HostCodeStash.h) goes back to the top level, the stand-in
// binaries are dropped, and every launch must name a kernel module that is
// now a gpu.binary (or still a gpu.module).
//
//===----------------------------------------------------------------------===//

#include "HostCodeStash.h"

#include "nabla/Host/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace nabla {
#define GEN_PASS_DEF_RESTOREHOSTCODE
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using nabla::findHostCodeStash;

namespace {

struct RestoreHostCode
    : public nabla::impl::RestoreHostCodeBase<RestoreHostCode> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp stash = findHostCodeStash(module);
    if (!stash)
      return;
    for (Operation &op : llvm::make_early_inc_range(*stash.getBody())) {
      if (isa<gpu::BinaryOp>(op)) {
        op.erase();
        continue;
      }
      op.moveBefore(stash);
    }
    stash.erase();
    bool failed = false;
    module.walk([&](gpu::LaunchFuncOp launch) {
      Operation *container = module.lookupSymbol(launch.getKernelModuleName());
      if (!isa_and_nonnull<gpu::BinaryOp, gpu::GPUModuleOp>(container)) {
        launch.emitOpError("launches a kernel of '")
            << launch.getKernelModuleName().getValue()
            << "', which is no kernel module after kernel lowering";
        failed = true;
      }
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
