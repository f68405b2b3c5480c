//===- nabla-opt.cpp - mlir-opt with Nabla's dialects and passes ----------===//
//
// The modular optimizer driver: every upstream dialect, extension and pass,
// plus Nabla's dialects, passes and pipelines (and, in a build with tests,
// the `nabla_test` stand-in frontend dialect the lit suite uses).
//
//===----------------------------------------------------------------------===//

#include "nabla/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#ifdef NABLA_INCLUDE_TEST_DIALECT
#include "TestDialect.h"
#endif

/// --version: Nabla's version and the LLVM/MLIR it was built against.
static void printVersion(llvm::raw_ostream &os) {
  os << "nabla-opt (Nabla) " NABLA_VERSION "\n"
     << "  LLVM/MLIR " LLVM_VERSION_STRING "\n";
}

int main(int argc, char **argv) {
  llvm::cl::SetVersionPrinter(printVersion);
  mlir::registerAllPasses();
  nabla::registerAllPasses();

  mlir::DialectRegistry registry;
  nabla::registerUpstreamDialects(registry);
  nabla::registerAllDialects(registry);
#ifdef NABLA_INCLUDE_TEST_DIALECT
  nabla::test::registerTestDialect(registry);
  nabla::test::registerTestPasses();
#endif

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Nabla modular optimizer driver\n", registry));
}
