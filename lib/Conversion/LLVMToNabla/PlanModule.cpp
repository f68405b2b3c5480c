//===- PlanModule.cpp - What --nabla-raise-llvm will rewrite --------------===//
//
// Finds the kernels and the order to raise functions in (callees first),
// plans each function (PlanFunction.cpp: roots, element types, parameters)
// and fixes its workgroup slots. Nothing is rewritten here; every refusal is
// a located error naming the instruction.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nabla::raise;

bool nabla::raise::isKernel(LLVM::LLVMFuncOp func) {
  switch (func.getCConv()) {
  case LLVM::CConv::PTX_Kernel:
  case LLVM::CConv::AMDGPU_KERNEL:
  case LLVM::CConv::SPIR_KERNEL:
    return true;
  default:
    return func->hasAttr("nvvm.kernel") || func->hasAttr("rocdl.kernel");
  }
}

unsigned FunctionPlan::getOrAddRoot(const Root &root) {
  for (auto [i, existing] : llvm::enumerate(roots))
    if (existing == root)
      return i;
  roots.push_back(root);
  elementTypes.push_back(nullptr);
  return roots.size() - 1;
}

Type ModulePlan::getElementType(const FunctionPlan &plan, unsigned root) const {
  const Root &r = plan.roots[root];
  if (r.kind == Root::Shared || r.kind == Root::HostGlobal ||
      r.kind == Root::Address)
    if (Type type = globalElementTypes.lookup(r.global))
      return type;
  return plan.getElementType(root);
}

Type FunctionPlan::getElementType(unsigned root) const {
  if (Type type = elementTypes[root])
    return type;
  return IntegerType::get(LLVM::LLVMFuncOp(func).getContext(), 8);
}

/// Adds the workgroup slots of `plan`: its own workgroup roots, those of its
/// callees, and for each Enzyme request the callee's slots plus a shadow of
/// each float one.
static void planSharedSlots(ModulePlan &module, FunctionPlan &plan) {
  auto add = [&](SharedSlot slot) {
    if (!llvm::is_contained(plan.shared, slot))
      plan.shared.push_back(slot);
  };
  for (const Root &root : plan.roots)
    if (root.kind == Root::Shared)
      add({root.global, false});
  plan.func.walk([&](LLVM::CallOp call) {
    std::optional<StringRef> name = call.getCallee();
    if (!name)
      return;
    if (getEnzymeMode(*name)) {
      auto address = call.getOperand(0).getDefiningOp<LLVM::AddressOfOp>();
      Value fn = call.getOperand(0);
      while (!address && fn.getDefiningOp() &&
             fn.getDefiningOp()->getNumOperands() == 1) {
        fn = fn.getDefiningOp()->getOperand(0);
        address = fn.getDefiningOp<LLVM::AddressOfOp>();
      }
      if (!address)
        return;
      FunctionPlan *callee =
          module.lookup(address.getGlobalNameAttr().getAttr());
      if (!callee)
        return;
      for (const SharedSlot &slot : callee->shared) {
        add(slot);
        Type element = module.globalElementTypes.lookup(slot.global);
        // Dynamic shared memory's shadow is a second region after the
        // primal's, at the launch's size (makeKernel).
        if (!slot.shadow && element && isa<FloatType>(element))
          add({slot.global, true});
      }
      return;
    }
    if (FunctionPlan *callee =
            module.lookup(StringAttr::get(call.getContext(), *name)))
      for (const SharedSlot &slot : callee->shared)
        add(slot);
  });
}

/// Depth-first post order of the functions reachable through calls and
/// Enzyme requests; recursion is an error.
static LogicalResult orderFunctions(ModuleOp module, LLVM::LLVMFuncOp func,
                                    DenseMap<Operation *, int> &state,
                                    SmallVectorImpl<LLVM::LLVMFuncOp> &order) {
  int &mark = state[func];
  if (mark == 2)
    return success();
  if (mark == 1)
    return fail(func) << "cannot raise the recursive function @"
                      << func.getName();
  mark = 1;
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    StringAttr target;
    if (auto call = dyn_cast<LLVM::CallOp>(op)) {
      if (auto callee = call.getCalleeAttr())
        target = callee.getAttr();
    } else if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
      target = address.getGlobalNameAttr().getAttr();
    }
    if (!target)
      return WalkResult::advance();
    auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(target);
    if (!callee || callee.isExternal())
      return WalkResult::advance();
    if (callee == func)
      return fail(op) << "cannot raise the recursive function @"
                      << func.getName(),
             WalkResult::interrupt();
    return failed(orderFunctions(module, callee, state, order))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  state[func] = 2;
  order.push_back(func);
  return success();
}

LogicalResult nabla::raise::planModule(ModuleOp module, ModulePlan &plan,
                                       StringRef kernel) {
  plan.module = module;
  DenseMap<Operation *, int> state;
  SmallVector<LLVM::LLVMFuncOp> order;
  // What the kernels reach (calls and Enzyme requests); device functions
  // nothing launches are not raised. A module without kernels raises all.
  bool hasKernels =
      llvm::any_of(module.getOps<LLVM::LLVMFuncOp>(), [](LLVM::LLVMFuncOp f) {
        return !f.isExternal() && isKernel(f);
      });
  if (!kernel.empty()) {
    auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(kernel);
    if (!func || func.isExternal() || !isKernel(func))
      return module.emitError("no kernel named '") << kernel << "' to raise";
    if (failed(orderFunctions(module, func, state, order)))
      return failure();
  }
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (kernel.empty() && !func.isExternal() &&
        (!hasKernels || isKernel(func)) &&
        failed(orderFunctions(module, func, state, order)))
      return failure();
  for (LLVM::LLVMFuncOp func : order) {
    FunctionPlan &fp = plan.functions[func.getSymNameAttr()];
    fp.func = func;
    if (failed(planFunction(plan, fp)))
      return failure();
    planSharedSlots(plan, fp);
  }
  return success();
}
