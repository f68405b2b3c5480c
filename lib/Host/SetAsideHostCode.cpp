//===- SetAsideHostCode.cpp - Host code aside while kernels are lowered ---===//
//
// nabla-set-aside-host-code. While kernels are lowered their signatures
// change (and SPIR-V's gpu.func ops disappear), so a host gpu.launch_func
// next to them would fail verification. The host code waits in a nested
// module (HostCodeStash.h) whose stand-in gpu.binary ops satisfy the launch
// verifier (which checks nothing against a binary) until the kernels are
// binaries; nabla-restore-host-code takes it back.
//
//===----------------------------------------------------------------------===//

#include "HostCodeStash.h"

#include "nabla/Host/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/IR/SymbolTable.h"

#include <set>

namespace nabla {
#define GEN_PASS_DEF_SETASIDEHOSTCODE
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using nabla::findHostCodeStash;
using nabla::kHostCodeStashName;

namespace {

struct SetAsideHostCode
    : public nabla::impl::SetAsideHostCodeBase<SetAsideHostCode> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (findHostCodeStash(module) || !nabla::hasGPUHostCode(module))
      return;
    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    builder.setInsertionPointToEnd(module.getBody());
    auto stash = ModuleOp::create(builder, module.getLoc(), kHostCodeStashName);
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

} // namespace
