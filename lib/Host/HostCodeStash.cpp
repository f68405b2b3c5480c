//===- HostCodeStash.cpp - Host code aside while kernels are lowered ------===//
//
// nabla-set-aside-host-code and nabla-restore-host-code. While kernels are
// lowered their signatures change (and SPIR-V's gpu.func ops disappear), so
// a host gpu.launch_func next to them would fail verification. The host code
// waits in a nested module whose stand-in gpu.binary ops satisfy the launch
// verifier (which checks nothing against a binary) until the kernels are
// binaries.
//
//===----------------------------------------------------------------------===//

#include "nabla/Host/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/IR/SymbolTable.h"

#include <set>

namespace nabla {
#define GEN_PASS_DEF_SETASIDEHOSTCODE
#define GEN_PASS_DEF_RESTOREHOSTCODE
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

constexpr StringLiteral kStashName = "nabla_host_code";

/// The nested module holding set-aside host code, if any.
ModuleOp findStash(ModuleOp module) {
  for (auto nested : module.getOps<ModuleOp>())
    if (nested.getSymName() == kStashName)
      return nested;
  return nullptr;
}

struct SetAsideHostCode
    : public nabla::impl::SetAsideHostCodeBase<SetAsideHostCode> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (findStash(module) || !nabla::hasGPUHostCode(module))
      return;
    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    builder.setInsertionPointToEnd(module.getBody());
    auto stash = ModuleOp::create(builder, module.getLoc(), kStashName);
    stash->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                   builder.getUnitAttr());
    // Stand-ins for the kernel modules that launches name.
    std::set<std::string> launched;
    module.walk([&](gpu::LaunchFuncOp launch) {
      launched.insert(launch.getKernelModuleName().str());
    });
    builder.setInsertionPointToStart(stash.getBody());
    for (const std::string &name : launched) {
      auto placeholder =
          gpu::ObjectAttr::get(context, spirv::getDefaultTargetEnv(context),
                               gpu::CompilationTarget::Binary,
                               builder.getStringAttr(""), nullptr, nullptr);
      gpu::BinaryOp::create(builder, module.getLoc(), name, nullptr,
                            builder.getArrayAttr({placeholder}));
    }
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
      if (&op == stash.getOperation() ||
          isa<gpu::GPUModuleOp, gpu::BinaryOp>(op))
        continue;
      op.moveBefore(stash.getBody(), stash.getBody()->end());
    }
  }
};

struct RestoreHostCode
    : public nabla::impl::RestoreHostCodeBase<RestoreHostCode> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp stash = findStash(module);
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
