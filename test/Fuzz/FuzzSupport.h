//===- FuzzSupport.h - Set-up shared by the MLIR fuzz targets ---*- C++ -*-===//
//
// What every fuzz target that reads MLIR text needs: the dialect registry of
// nabla-opt, one quiet context per input (no threads, diagnostics collected
// instead of printed), LLVM fatal errors turned into aborts (a fatal error in
// upstream code is a finding, with a stack), a pass-manager run that verifies
// the IR after every pass that succeeded (a pass that reports success on
// invalid IR is a finding), and options read from the input's text so that a
// seed taken from a lit test keeps its RUN line's options.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TEST_FUZZ_FUZZSUPPORT_H
#define NABLA_TEST_FUZZ_FUZZSUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace nabla::fuzz {

/// Once per process (from LLVMFuzzerInitialize): registers every upstream and
/// Nabla pass and pipeline and makes LLVM fatal errors abort.
void initialize();

/// The registry nabla-opt uses: every upstream dialect and extension, Nabla's
/// dialects and the `nabla_test` stand-in frontend dialect of the lit suite.
const mlir::DialectRegistry &getRegistry();

/// Prints `what` (and the last diagnostic of the input, if any) and aborts:
/// libFuzzer records the input as a crash with the stack.
[[noreturn]] void reportFinding(const llvm::Twine &what);

/// One input's context: single-threaded, every dialect of getRegistry()
/// loadable, diagnostics kept (the last error) and never printed. The
/// MLIRContext behind it is shared with neighbouring inputs (see
/// FuzzSupport.cpp); create one FuzzContext per input, never two at once.
class FuzzContext {
public:
  FuzzContext();
  FuzzContext(const FuzzContext &) = delete;

  mlir::MLIRContext &get() { return context; }

  /// Checks (nabla::checkMLIRSource), parses and verifies `text` as the
  /// tools do; null when any step fails.
  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef text);

  /// Reads `text` as the tools read a `.ll` file (nabla::importLLVMIR:
  /// LLVM's parser and verifier, then MLIR's importer); null on failure.
  mlir::OwningOpRef<mlir::ModuleOp> parseLLVMIR(llvm::StringRef text);

  /// Runs `pm` on `module` and verifies the IR after every pass that
  /// succeeded; invalid IR after a successful pass is reported as a finding.
  mlir::LogicalResult run(mlir::PassManager &pm, mlir::ModuleOp module);

private:
  mlir::MLIRContext &context;
  mlir::ScopedDiagnosticHandler handler;
};

/// The value of `key=VALUE` written anywhere in `text` (typically a lit RUN
/// line), VALUE made of letters, digits and `_.,-`; nullopt when absent.
std::optional<std::string> findOption(llvm::StringRef text,
                                      llvm::StringRef key);

/// findOption as an integer clamped to [min, max].
std::optional<int64_t> findIntegerOption(llvm::StringRef text,
                                         llvm::StringRef key, int64_t min,
                                         int64_t max);

/// A directory private to this process, removed at exit.
const std::string &getScratchDirectory();

} // namespace nabla::fuzz

#endif // NABLA_TEST_FUZZ_FUZZSUPPORT_H
