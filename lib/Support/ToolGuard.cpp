//===- ToolGuard.cpp - Last line of defence of Nabla's tools --------------===//
//
// The handlers only use async-signal-safe calls (write, _exit): they may run
// inside a signal handler or after the heap is exhausted. Temporary files
// registered with LLVM are removed first (RunInterruptHandlers).
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/ToolGuard.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/Signals.h"

#include <cstring>
#include <exception>
#include <unistd.h>

static const char *guardedTool = "nabla";

static void writeError(const char *text) {
  if (text)
    (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

[[noreturn]] static void exitInternalError(const char *reason) {
  writeError(guardedTool);
  writeError(": internal error: ");
  writeError(reason);
  writeError("\n");
  ::_exit(1);
}

static void onFatalError(void *, const char *reason, bool) {
  llvm::sys::RunInterruptHandlers();
  exitInternalError(reason);
}

/// Runs after LLVM's stack trace printer (registered earlier by InitLLVM).
static void onCrashSignal(void *) {
  exitInternalError("the tool crashed (see the stack dump above); please "
                    "report it with the input that caused it");
}

static void onTerminate() {
  llvm::sys::RunInterruptHandlers();
  if (std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception &e) {
      exitInternalError(e.what());
    } catch (...) {
    }
  }
  exitInternalError("uncaught exception");
}

void nabla::installToolGuard(const char *toolName) {
  guardedTool = toolName;
  llvm::setBugReportMsg("PLEASE report this Nabla internal error with the "
                        "input and command line that caused it.\n");
  llvm::install_fatal_error_handler(onFatalError);
  llvm::install_bad_alloc_error_handler(onFatalError);
  llvm::sys::AddSignalHandler(onCrashSignal, nullptr);
  std::set_terminate(onTerminate);
}
