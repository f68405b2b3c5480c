//===- nabla-opt.cpp - mlir-opt with Nabla's dialects and passes ----------===//
//
// The modular optimizer driver: every upstream dialect, extension and pass,
// plus Nabla's dialects, passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "nabla/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  nabla::registerAllPasses();

  mlir::DialectRegistry registry;
  nabla::registerUpstreamDialects(registry);
  nabla::registerAllDialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Nabla modular optimizer driver\n", registry));
}
