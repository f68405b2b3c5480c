//===- KernelClosure.cpp - What one kernel needs of a module --------------===//
//
// nabla-run and nabla.run launch one kernel: compiling only what it needs
// keeps an error in an unrelated function of the file (a gradient request
// that cannot be differentiated, an op a target lacks) from blocking it. The
// closure starts at the kernel (or the nabla.kernel_adjoint that generates
// it) and follows every symbol its ops name — calls, derivative requests,
// relocation records, globals — plus the custom derivative rules registered
// for any function in it, until nothing new is reached.
//
//===----------------------------------------------------------------------===//

#include "nabla/Compile/Compile.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

/// The op of `module` that defines kernel `name`: the gpu.func itself or
/// the kernel adjoint request that generates it.
static Operation *findKernelRoot(gpu::GPUModuleOp module, StringRef name) {
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto func = dyn_cast<gpu::GPUFuncOp>(op);
        func && func.isKernel() && func.getName() == name)
      return &op;
    if (auto request = dyn_cast<nabla::KernelAdjointOp>(op);
        request && request.getAdjoint() == name)
      return &op;
  }
  return nullptr;
}

LogicalResult nabla::keepOnlyKernel(ModuleOp module, StringRef name) {
  gpu::GPUModuleOp home;
  Operation *root = nullptr;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
    if ((root = findKernelRoot(gpuModule, name))) {
      home = gpuModule;
      break;
    }
  if (!root)
    return failure();
  SymbolTable symbols(home);
  llvm::SmallPtrSet<Operation *, 16> kept = {root};
  SmallVector<Operation *> worklist = {root};
  auto keep = [&](Operation *op) {
    if (op && kept.insert(op).second)
      worklist.push_back(op);
  };
  for (bool grew = true; grew;) {
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(op))
        for (const SymbolTable::SymbolUse &use : *uses)
          keep(symbols.lookup(use.getSymbolRef().getRootReference()));
      // getSymbolUses looks at nested ops only; the op's own attributes
      // (a kernel adjoint's kernel) count too.
      op->getAttrDictionary().walk([&](SymbolRefAttr ref) {
        keep(symbols.lookup(ref.getRootReference()));
      });
    }
    // Custom derivative rules of kept functions, and their rules' needs.
    grew = false;
    for (auto rule : home.getBody()->getOps<nabla::CustomDerivativeOp>())
      if (!kept.contains(rule) &&
          kept.contains(symbols.lookup(rule.getCallee()))) {
        keep(rule);
        grew = true;
      }
  }
  for (Operation &op :
       llvm::make_early_inc_range(home.getBody()->without_terminator()))
    if (!kept.contains(&op))
      op.erase();
  // Other device modules and host code have no part in the launch.
  for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
    if (&op != home.getOperation() &&
        isa<gpu::GPUModuleOp, func::FuncOp, gpu::BinaryOp>(op))
      op.erase();
  return success();
}
