//===- consumer.cpp - A minimal frontend built on installed Nabla ---------===//
//
// What a GPU frontend does with Nabla:
//   1. register the dialects it emits and Nabla's (registerAllDialects; the
//      GPU pipelines also need every upstream dialect and LLVM IR
//      translation: registerUpstreamDialects), and Nabla's passes and named
//      pipelines (registerAllPasses);
//   2. parse and verify a kernel module and find its derivative requests;
//   3. run Nabla's passes as a textual pipeline (default: differentiate, then
//      lower to Vulkan SPIR-V), a pipeline it cannot parse being an error.
// Prints one line per nabla.autodiff/fwddiff, then the gpu.binary ops the
// pipeline produced. Usage: nabla-consumer FILE.mlir [PIPELINE]
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/InitAll.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    llvm::errs() << "usage: nabla-consumer FILE.mlir [PIPELINE]\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  nabla::registerUpstreamDialects(registry);
  nabla::registerAllDialects(registry);
  nabla::registerAllPasses();
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

  // The text names its anchor, as mlir-opt's --pass-pipeline does. A
  // mistyped pass or option is reported here, before anything runs. (The
  // other parsePassPipeline overload, which fills an existing pass manager,
  // takes the passes without the anchor: given "builtin.module(...)" it
  // would nest them under a module inside the module and silently run
  // nothing.)
  std::string pipeline =
      argc == 3 ? argv[2]
                : "builtin.module(nabla-differentiate,"
                  "nabla-to-spirv{workgroup-size=64})";
  std::string error;
  llvm::raw_string_ostream errors(error);
  mlir::FailureOr<mlir::OpPassManager> parsed =
      mlir::parsePassPipeline(pipeline, errors);
  if (mlir::failed(parsed)) {
    llvm::errs() << "nabla-consumer: cannot parse the pipeline '" << pipeline
                 << "': " << error << "\n";
    return 1;
  }
  if (parsed->getOpAnchorName() != mlir::ModuleOp::getOperationName()) {
    llvm::errs() << "nabla-consumer: the pipeline must be anchored on "
                    "builtin.module, e.g. builtin.module(cse)\n";
    return 1;
  }
  mlir::PassManager pm(&context);
  static_cast<mlir::OpPassManager &>(pm) = std::move(*parsed);
  if (mlir::failed(pm.run(*module)))
    return 1;
  for (auto binary : module->getOps<mlir::gpu::BinaryOp>())
    llvm::outs() << "gpu.binary @" << binary.getName() << " with "
                 << binary.getObjects().size() << " object(s)\n";
  return 0;
}
