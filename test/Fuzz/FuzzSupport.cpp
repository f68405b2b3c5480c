//===- FuzzSupport.cpp - Shared set-up of Nabla's MLIR fuzz targets -------===//
//
// Registry, quiet per-input contexts, fatal errors as aborts, verified pass
// runs and options read from the input (see FuzzSupport.h).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "TestDialect.h"
#include "nabla/Conversion/LLVMToNabla/ImportLLVMIR.h"
#include "nabla/InitAll.h"
#include "nabla/Support/SourceChecks.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace mlir;

/// LLVM's header-only BumpPtrAllocator poisons the unused part of each slab
/// when compiled with ASan and unpoisons what it hands out. Nabla's code is
/// instrumented and libMLIR is not, so a slab that Nabla's inline copy
/// started (a uniqued attribute's storage, say) is later carved up by
/// libMLIR's copy without unpoisoning: a false use-after-poison. Manual
/// poisoning is therefore off in every fuzz target that links MLIR
/// (scripts/sanitize.sh sets the same for its tools).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

/// The last error diagnostic of the current input, printed with a finding.
static std::string lastDiagnostic;

void nabla::fuzz::reportFinding(const llvm::Twine &what) {
  std::fprintf(stderr, "==nabla-fuzz== FINDING: %s\n", what.str().c_str());
  if (!lastDiagnostic.empty())
    std::fprintf(stderr, "==nabla-fuzz== last diagnostic: %s\n",
                 lastDiagnostic.c_str());
  std::fflush(stderr);
  std::abort();
}

void nabla::fuzz::initialize() {
  static bool done = false;
  if (done)
    return;
  done = true;
  mlir::registerAllPasses();
  nabla::registerAllPasses();
  nabla::test::registerTestPasses();
  // report_fatal_error would print and exit(1); abort instead, so that
  // libFuzzer keeps the input and prints the stack that led there.
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        reportFinding(llvm::Twine("LLVM fatal error: ") + reason);
      },
      nullptr);
  (void)getRegistry();
}

const DialectRegistry &nabla::fuzz::getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    nabla::registerUpstreamDialects(*r);
    nabla::registerAllDialects(*r);
    nabla::test::registerTestDialect(*r);
    nabla::registerLLVMIRImport(*r);
    return r;
  }();
  return *registry;
}

/// Contexts are shared by consecutive inputs and replaced every
/// $NABLA_FUZZ_CONTEXT_INPUTS inputs (default 256; 1: a fresh context per
/// input). Creating a context with every dialect registered costs about a
/// millisecond under ASan, more than parsing a typical input; what an input
/// leaves in a shared context (uniqued types and attributes, loaded
/// dialects) is immutable and only grows until the next replacement.
static MLIRContext &acquireContext() {
  static std::unique_ptr<MLIRContext> shared;
  static unsigned inputs = 0;
  static const unsigned inputsPerContext = [] {
    const char *value = std::getenv("NABLA_FUZZ_CONTEXT_INPUTS");
    int n = value ? std::atoi(value) : 0;
    return n > 0 ? unsigned(n) : 256u;
  }();
  if (!shared || ++inputs >= inputsPerContext) {
    shared.reset();
    shared = std::make_unique<MLIRContext>(nabla::fuzz::getRegistry(),
                                           MLIRContext::Threading::DISABLED);
    inputs = 0;
  }
  return *shared;
}

nabla::fuzz::FuzzContext::FuzzContext()
    : context(acquireContext()), handler(&context, [](Diagnostic &diagnostic) {
        // NABLA_FUZZ_VERBOSE=1 prints every diagnostic (why an input is
        // rejected) when replaying inputs by hand.
        static const bool verbose = std::getenv("NABLA_FUZZ_VERBOSE");
        if (verbose)
          llvm::errs() << diagnostic.getLocation() << ": " << diagnostic
                       << "\n";
        if (diagnostic.getSeverity() == DiagnosticSeverity::Error) {
          lastDiagnostic.clear();
          llvm::raw_string_ostream os(lastDiagnostic);
          os << diagnostic.getLocation() << ": " << diagnostic;
        }
        return success();
      }) {
  lastDiagnostic.clear();
}

OwningOpRef<ModuleOp> nabla::fuzz::FuzzContext::parse(llvm::StringRef text) {
  // As the tools do: the source checks first reject text that upstream's
  // parser is known to crash on.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz-input"), llvm::SMLoc());
  return parseCheckedModule(sourceMgr, &context);
}

OwningOpRef<ModuleOp>
nabla::fuzz::FuzzContext::parseLLVMIR(llvm::StringRef text) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz-input.ll"),
      llvm::SMLoc());
  return importLLVMIR(sourceMgr, &context);
}

namespace {
/// Verifies the IR after every pass that succeeded. The pass manager's own
/// verifier would turn invalid IR into an ordinary pipeline failure, which is
/// indistinguishable from a pass rejecting its input.
struct VerifyAfterEachPass : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (failed(verify(op)))
      nabla::fuzz::reportFinding(llvm::Twine("pass '") + pass->getName() +
                                 "' (" + pass->getArgument() +
                                 ") succeeded on '" +
                                 op->getName().getStringRef() +
                                 "' but left IR that fails verification");
  }
};
} // namespace

LogicalResult nabla::fuzz::FuzzContext::run(PassManager &pm, ModuleOp module) {
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
  return pm.run(module);
}

std::optional<std::string> nabla::fuzz::findOption(llvm::StringRef text,
                                                   llvm::StringRef key) {
  std::string needle = (key + "=").str();
  for (size_t at = text.find(needle); at != llvm::StringRef::npos;
       at = text.find(needle, at + 1)) {
    // A whole option name: not the tail of a longer one.
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) ||
                   text[at - 1] == '_' || text[at - 1] == '-'))
      continue;
    llvm::StringRef value = text.drop_front(at + needle.size());
    value = value.take_while([](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
             c == '.' || c == ',' || c == '-';
    });
    return value.str();
  }
  return std::nullopt;
}

std::optional<int64_t> nabla::fuzz::findIntegerOption(llvm::StringRef text,
                                                      llvm::StringRef key,
                                                      int64_t min,
                                                      int64_t max) {
  std::optional<std::string> value = findOption(text, key);
  int64_t v;
  if (!value || llvm::StringRef(*value).getAsInteger(10, v))
    return std::nullopt;
  return std::min(max, std::max(min, v));
}

const std::string &nabla::fuzz::getScratchDirectory() {
  // Never destroyed: the atexit handler runs after static destructors.
  static const std::string *directory = [] {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("nabla-fuzz", path)) {
      std::fprintf(stderr, "nabla-fuzz: cannot create a scratch directory\n");
      std::exit(1);
    }
    auto *result = new std::string(path);
    std::atexit(
        [] { llvm::sys::fs::remove_directories(getScratchDirectory()); });
    return result;
  }();
  return *directory;
}
