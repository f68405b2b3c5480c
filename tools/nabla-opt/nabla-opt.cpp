//===- nabla-opt.cpp - mlir-opt with Nabla's dialects and passes ----------===//
//
// The modular optimizer driver: every upstream dialect, extension and pass,
// plus Nabla's dialects, passes and pipelines. Built a second time as
// nabla-test-opt with the test-only code (NABLA_INCLUDE_TEST_DIALECT: the
// `nabla_test` stand-in frontend dialect, its lowering, a pass provoking
// internal errors), which nabla-opt itself does not offer. The input
// is checked for what upstream's parser crashes on before it is parsed, and
// the tool guard turns anything left into an internal error with status 1.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/LLVMToNabla/ImportLLVMIR.h"
#include "nabla/InitAll.h"
#include "nabla/Support/SourceChecks.h"
#include "nabla/Support/ToolGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#ifdef NABLA_INCLUDE_TEST_DIALECT
#include "TestDialect.h"
#endif

/// --version: Nabla's version and the LLVM/MLIR it was built against.
#ifdef NABLA_INCLUDE_TEST_DIALECT
static constexpr const char *kToolName = "nabla-test-opt";
#else
static constexpr const char *kToolName = "nabla-opt";
#endif

static void printVersion(llvm::raw_ostream &os) {
  os << kToolName << " (Nabla) " NABLA_VERSION "\n"
     << "  LLVM/MLIR " LLVM_VERSION_STRING "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  nabla::installToolGuard(kToolName);
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

  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "Nabla modular optimizer driver\n", registry);
  // A failing pass prints its diagnostic, not the whole module after it
  // (upstream's default): --mlir-print-op-on-diagnostic asks for the IR.
  auto &options = llvm::cl::getRegisteredOptions();
  if (auto *printOp = static_cast<llvm::cl::opt<bool> *>(
          options.lookup("mlir-print-op-on-diagnostic"));
      printOp && printOp->getNumOccurrences() == 0)
    *printOp = false;
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << kToolName << ": " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef()),
      llvm::SMLoc());
  if (nabla::isLLVMIRInput(inputFile, *input)) {
    // A frontend's LLVM IR: imported into the LLVM dialect (with the .ll
    // positions as locations) and handed on as MLIR text.
    mlir::MLIRContext context(registry);
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    mlir::OwningOpRef<mlir::ModuleOp> imported =
        nabla::importLLVMIR(sourceMgr, &context);
    if (!imported)
      return 1;
    std::string text;
    llvm::raw_string_ostream os(text);
    imported->print(os, mlir::OpPrintingFlags().enableDebugInfo());
    // Named apart from the .ll, so that diagnostics quote the .ll's lines
    // (read from disk), not this text's.
    input =
        llvm::MemoryBuffer::getMemBufferCopy(text, inputFile + " (imported)");
  } else if (failed(nabla::checkMLIRSource(sourceMgr, bufferId)) ||
             failed(
                 nabla::checkParsedMLIRSource(sourceMgr, bufferId, registry))) {
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << kToolName << ": " << error << "\n";
    return 1;
  }
  if (failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
