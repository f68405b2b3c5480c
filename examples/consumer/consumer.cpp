//===- consumer.cpp - A minimal frontend built on installed Nabla ---------===//
//
// What a GPU frontend does first with Nabla: register its dialects next to
// the upstream ones it emits, parse a kernel module, verify it, and find the
// derivative requests in it. Prints one line per nabla.autodiff/fwddiff.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: nabla-consumer FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  nabla::registerAllDialects(registry);
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect>();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 1;

  unsigned count = 0;
  module->walk([&](mlir::Operation *op) {
    if (!mlir::isa<nabla::AutodiffOp, nabla::FwddiffOp>(op))
      return;
    ++count;
    llvm::outs() << op->getName() << " of "
                 << op->getAttrOfType<mlir::FlatSymbolRefAttr>("callee")
                 << " in @"
                 << op->getParentOfType<mlir::gpu::GPUFuncOp>().getName()
                 << "\n";
  });
  llvm::outs() << "derivative requests: " << count << "\n";
  return 0;
}
