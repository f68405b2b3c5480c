//===- RaiseLLVM.cpp - --nabla-raise-llvm ---------------------------------===//
//
// Raises a module imported from a frontend's LLVM IR to Nabla's
// target-neutral form: plans the module (PlanModule.cpp), rewrites every
// function into a func.func of one gpu.module (RaiseFunction.cpp), lifts
// control flow to scf, turns kernels into gpu.func (workgroup slots become
// workgroup attributions) and drops the LLVM-level leftovers (declarations,
// marker globals, the data layout of the frontend's target).
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "nabla/Conversion/Passes.h"
#include "nabla/Dialect/Nabla/IR/NablaDialect.h"

#include "mlir/Conversion/ControlFlowToSCF/ControlFlowToSCF.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace nabla {
#define GEN_PASS_DEF_RAISELLVM
#include "nabla/Conversion/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using namespace nabla::raise;

namespace {

struct RaiseLLVM : public nabla::impl::RaiseLLVMBase<RaiseLLVM> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Builds the scf.if chain that tests the cases of `op` from `index` on
/// (the default region at the end), taking the case regions over.
static scf::IfOp buildCaseChain(OpBuilder &builder, scf::IndexSwitchOp op,
                               unsigned index) {
  Location loc = op.getLoc();
  Value caseValue =
      arith::ConstantIndexOp::create(builder, loc, op.getCases()[index]);
  Value matches = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                        op.getArg(), caseValue);
  auto chain = scf::IfOp::create(builder, loc, op.getResultTypes(), matches,
                                 /*addThenBlock=*/false,
                                 /*addElseBlock=*/false);
  chain.getThenRegion().takeBody(op.getCaseRegions()[index]);
  if (index + 1 == op.getNumCases()) {
    chain.getElseRegion().takeBody(op.getDefaultRegion());
    return chain;
  }
  Block *elseBlock = builder.createBlock(&chain.getElseRegion());
  builder.setInsertionPointToStart(elseBlock);
  scf::IfOp next = buildCaseChain(builder, op, index + 1);
  scf::YieldOp::create(builder, loc, next.getResults());
  return chain;
}

/// Lifting a loop with several exits leaves an scf.index_switch on the exit
/// taken; it becomes an scf.if chain, which every later pass (the AD in
/// particular) handles.
static void lowerIndexSwitches(Operation *root) {
  SmallVector<scf::IndexSwitchOp> switches;
  root->walk([&](scf::IndexSwitchOp op) { switches.push_back(op); });
  for (scf::IndexSwitchOp op : switches) {
    if (op.getNumCases() == 0)
      continue; // folded away by the canonicalizer
    OpBuilder builder(op);
    scf::IfOp chain = buildCaseChain(builder, op, 0);
    op.replaceAllUsesWith(chain.getResults());
    op.erase();
  }
}

/// Turns the raised func.func of kernel `plan` into a gpu.func of the same
/// name whose workgroup attributions are the function's workgroup slots.
static void makeKernel(func::FuncOp func, ArrayRef<Type> attributions) {
  OpBuilder builder(func);
  unsigned numInputs = func.getNumArguments() - attributions.size();
  auto type = builder.getFunctionType(
      func.getArgumentTypes().take_front(numInputs), {});
  auto kernel = gpu::GPUFuncOp::create(builder, func.getLoc(), func.getName(),
                                       type, attributions);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  builder.getUnitAttr());
  kernel.getBody().getBlocks().clear();
  kernel.getBody().takeBody(func.getBody());
  kernel.walk([&](func::ReturnOp ret) {
    OpBuilder at(ret);
    gpu::ReturnOp::create(at, ret.getLoc());
    ret.erase();
  });
  func.erase();
}

void RaiseLLVM::runOnOperation() {
  ModuleOp module = getOperation();
  if (llvm::none_of(module.getOps<LLVM::LLVMFuncOp>(),
                    [](LLVM::LLVMFuncOp f) { return !f.isExternal(); }))
    return;
  if (!module.getOps<gpu::GPUModuleOp>().empty()) {
    module.emitError("cannot raise LLVM functions next to a gpu.module: "
                     "raise a frontend's LLVM IR on its own");
    return signalPassFailure();
  }
  for (auto existing : module.getOps<func::FuncOp>()) {
    existing.emitError("cannot raise LLVM functions next to a func.func");
    return signalPassFailure();
  }

  ModulePlan plan;
  if (failed(planModule(module, plan)))
    return signalPassFailure();
  // Workgroup slots of kernels become attributions (typed now, while the
  // LLVM globals still exist).
  DenseMap<StringAttr, SmallVector<Type>> attributions;
  for (auto &[name, fp] : plan.functions)
    if (fp.isKernel)
      for (const SharedSlot &slot : fp.shared)
        attributions[name].push_back(getSlotType(plan, slot));

  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  auto gpuModule =
      gpu::GPUModuleOp::create(builder, module.getLoc(), moduleName);
  Block &into = gpuModule.getBodyRegion().front();
  for (auto &[name, fp] : plan.functions)
    if (!raiseFunction(plan, fp, into))
      return signalPassFailure();

  // Everything else at the top level was LLVM-level: the functions just
  // raised, declarations (Enzyme's entry points, device library functions),
  // globals (now memref.globals or consumed markers), module flags.
  for (Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (&op != gpuModule.getOperation())
      op.erase();
  for (StringRef attr : {"dlti.dl_spec", "llvm.data_layout",
                         "llvm.target_triple", "llvm.ident",
                         "llvm.module_asm", "llvm.dependent_libraries"})
    module->removeAttr(attr);
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());

  OpPassManager lift(gpu::GPUModuleOp::getOperationName());
  lift.addPass(createLiftControlFlowToSCFPass());
  lift.addPass(createCanonicalizerPass());
  lift.addPass(createCSEPass());
  if (failed(runPipeline(lift, gpuModule)))
    return signalPassFailure();
  lowerIndexSwitches(gpuModule);
  convertConstantTripLoops(gpuModule);

  for (auto &[name, fp] : plan.functions)
    if (fp.isKernel)
      makeKernel(gpuModule.lookupSymbol<func::FuncOp>(name),
                 attributions.lookup(name));
}
