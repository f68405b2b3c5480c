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
#include "nabla/Dialect/Reloc/Transforms/Passes.h"
#include "nabla/Support/OptionNames.h"

#include "mlir/Conversion/ControlFlowToSCF/ControlFlowToSCF.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace nabla {
#define GEN_PASS_DEF_RAISELLVM
#include "nabla/Conversion/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using namespace nabla::raise;

namespace {

struct RaiseLLVM
    : public nabla::SuggestOptionNames<nabla::impl::RaiseLLVMBase<RaiseLLVM>> {
  using SuggestOptionNames::SuggestOptionNames;
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
  // The recursion leaves the builder in the innermost else block: the yield
  // goes after `next` (three or more cases put every yield there, invalid
  // IR found by scripts/fuzz_cuda_cfg.py).
  builder.setInsertionPointAfter(next);
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

/// Bytes of the view of dynamic shared memory a kernel takes (metadata only:
/// the launch decides the size, and nothing checks bounds on it).
static constexpr int64_t kDynamicSharedViewBytes = int64_t(1) << 30;

/// Turns the raised func.func of kernel `plan` into a gpu.func of the same
/// name whose workgroup attributions are the function's workgroup slots;
/// a dynamically sized slot (`extern __shared__`) is a typed view of
/// gpu.dynamic_shared_memory instead.
static void makeKernel(func::FuncOp func, ArrayRef<Type> slots,
                       ArrayRef<bool> shadows) {
  OpBuilder builder(func);
  unsigned firstSlot = func.getNumArguments() - slots.size();
  SmallVector<Type> attributions;
  Block &entry = func.getBody().front();
  builder.setInsertionPointToStart(&entry);
  // A gradient's shadow of dynamic shared memory follows the primal's
  // region: the launch's bytes, a parameter after the kernel's own (the
  // runtimes set it and reserve twice the bytes).
  Value launchBytes;
  for (auto [k, type] : llvm::enumerate(slots)) {
    if (!shadows[k] || cast<MemRefType>(type).hasStaticShape())
      continue;
    (void)func.insertArgument(
        firstSlot, builder.getI32Type(),
        builder.getDictionaryAttr(builder.getNamedAttr(
            nabla::kDynamicSharedBytesAttrName, builder.getUnitAttr())),
        func.getLoc());
    launchBytes = arith::IndexCastUIOp::create(
        builder, func.getLoc(), builder.getIndexType(),
        entry.getArgument(firstSlot));
    ++firstSlot;
    break;
  }
  llvm::BitVector dynamicSlots(func.getNumArguments());
  for (auto [k, type] : llvm::enumerate(slots)) {
    auto memref = cast<MemRefType>(type);
    if (memref.hasStaticShape()) {
      attributions.push_back(type);
      continue;
    }
    // Located at the first access (errors about it name a line of the .ll).
    BlockArgument slot = entry.getArgument(firstSlot + k);
    Location loc =
        slot.use_empty() ? func.getLoc() : (*slot.getUsers().begin())->getLoc();
    auto raw = gpu::DynamicSharedMemoryOp::create(
        builder, loc,
        MemRefType::get({ShapedType::kDynamic}, builder.getI8Type(),
                        MemRefLayoutAttrInterface(), memref.getMemorySpace()));
    int64_t elementBytes =
        std::max<int64_t>(1, memref.getElementTypeBitWidth() / 8);
    Value offset = arith::ConstantIndexOp::create(builder, loc, 0);
    Value count = arith::ConstantIndexOp::create(
        builder, loc, kDynamicSharedViewBytes / elementBytes);
    if (shadows[k]) {
      // The shadow: the launch's bytes after the primal, as many elements
      // (its zeroing loop runs over them).
      offset = launchBytes;
      count = arith::DivUIOp::create(
          builder, loc, launchBytes,
          arith::ConstantIndexOp::create(builder, loc, elementBytes));
    }
    Value view = memref::ViewOp::create(builder, loc, memref, raw, offset,
                                        ValueRange{count});
    slot.replaceAllUsesWith(view);
    dynamicSlots.set(firstSlot + k);
  }
  (void)func.eraseArguments(dynamicSlots);
  builder.setInsertionPoint(func);
  unsigned numInputs = func.getNumArguments() - attributions.size();
  auto type = builder.getFunctionType(
      func.getArgumentTypes().take_front(numInputs), {});
  auto kernel = gpu::GPUFuncOp::create(builder, func.getLoc(), func.getName(),
                                       type, attributions);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  builder.getUnitAttr());
  for (unsigned i = 0; i < numInputs; ++i)
    kernel.setArgAttrs(i, func.getArgAttrDict(i));
  kernel.getBody().getBlocks().clear();
  kernel.getBody().takeBody(func.getBody());
  kernel.walk([&](func::ReturnOp ret) {
    OpBuilder at(ret);
    gpu::ReturnOp::create(at, ret.getLoc());
    ret.erase();
  });
  func.erase();
}

/// Calls that report an error before a trap (Julia's GPU runtime, CUDA's
/// assert): the raised kernel has no way to report, and the thread returns
/// at the trap's `unreachable` instead.
static bool isErrorReport(StringRef name) {
  return llvm::is_contained({"gpu_report_exception", "gpu_signal_exception",
                             "gpu_report_exception_name",
                             "gpu_report_exception_frame", "__assertfail",
                             "__assert_fail"},
                            name);
}

/// Drops error reports and traps, and what only they used (their message
/// and host-object operands).
static void dropErrorPaths(ModuleOp module) {
  SmallVector<Operation *> dead;
  module.walk([&](Operation *op) {
    if (auto call = dyn_cast<LLVM::CallOp>(op)) {
      if (call.getCallee() && isErrorReport(*call.getCallee()) &&
          call.use_empty())
        dead.push_back(op);
    } else if (op->getName().getStringRef() == "llvm.intr.trap") {
      dead.push_back(op);
    } else if (auto intrinsic = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      if (intrinsic.getIntrin() == "llvm.trap")
        dead.push_back(op);
    }
  });
  SmallVector<Operation *> operands;
  for (Operation *op : dead) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        operands.push_back(def);
    op->erase();
  }
  while (!operands.empty()) {
    Operation *op = operands.pop_back_val();
    if (!op->use_empty() || !isMemoryEffectFree(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        operands.push_back(def);
    op->erase();
  }
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

  rewriteKnownInlineAsm(module);
  rewriteSinCosCalls(module);
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal())
      rewriteAlignedPointers(func);
  rewriteCompareExchangeLoops(module);
  if (failed(rewriteDevicePrintf(module)))
    return signalPassFailure();
  dropErrorPaths(module);
  if (failed(flattenRequestStructs(module)) ||
      failed(inlineAggregateCalls(module)))
    return signalPassFailure();
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal())
      retypeReinterpretedAccesses(func);
  splitObjectSelects(module);
  ModulePlan plan;
  if (failed(planModule(module, plan, kernel)))
    return signalPassFailure();
  // Workgroup slots of kernels become attributions (typed now, while the
  // LLVM globals still exist).
  DenseMap<StringAttr, SmallVector<Type>> attributions;
  DenseMap<StringAttr, SmallVector<bool>> shadows;
  for (auto &[name, fp] : plan.functions)
    if (fp.isKernel)
      for (const SharedSlot &slot : fp.shared) {
        attributions[name].push_back(getSlotType(plan, slot));
        shadows[name].push_back(slot.shadow);
      }

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
  for (Operation &op :
       llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (&op != gpuModule.getOperation())
      op.erase();
  for (StringRef attr :
       {"dlti.dl_spec", "llvm.data_layout", "nabla.address_sizes",
        "llvm.target_triple", "llvm.ident", "llvm.module_asm",
        "llvm.dependent_libraries"})
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
                 attributions.lookup(name), shadows.lookup(name));
  if (failed(convergeWarps(gpuModule)))
    return signalPassFailure();

  // Host objects the frontend named (v2 declarations, v1 baked addresses)
  // become relocation records, as reloc-raise makes them for MLIR input.
  if (module->hasAttr("reloc.gv_to_value") ||
      module->hasAttr("reloc.address_map")) {
    OpPassManager records(ModuleOp::getOperationName());
    records.addPass(nabla::reloc::createRelocRaise());
    if (failed(runPipeline(records, module)))
      return signalPassFailure();
  }
}
