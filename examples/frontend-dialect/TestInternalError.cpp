//===- TestInternalError.cpp - Provoke an internal error (tests only) -----===//
//
// `nabla-test-internal-error{kind=...}` fails the way a bug would: an LLVM
// fatal error, a crash signal or an abort, so that the lit suite can check
// that nabla::installToolGuard turns each into "internal error" and exit 1.
//
//===----------------------------------------------------------------------===//

#include "TestDialect.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

#include <csignal>
#include <cstdlib>

using namespace mlir;

namespace {

struct TestInternalError
    : public PassWrapper<TestInternalError, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestInternalError)
  TestInternalError() = default;
  TestInternalError(const TestInternalError &other) : PassWrapper(other) {}
  StringRef getArgument() const final { return "nabla-test-internal-error"; }
  StringRef getDescription() const final {
    return "Fail like a bug would: kind=fatal|signal|abort (tests only)";
  }
  Option<std::string> kind{*this, "kind",
                           llvm::cl::desc("fatal, signal or abort"),
                           llvm::cl::init("fatal")};
  void runOnOperation() override {
    if (kind == "signal")
      std::raise(SIGSEGV);
    else if (kind == "abort")
      std::abort();
    llvm::report_fatal_error("nabla-test-internal-error was asked to fail");
  }
};

} // namespace

void nabla::test::registerTestInternalError() {
  PassRegistration<TestInternalError>();
}
