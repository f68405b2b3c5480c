// The last line of defence: whatever still goes wrong inside a tool (an LLVM
// fatal error, a crash signal, an abort) ends as "internal error" and exit
// status 1, never a core dump. The failures are provoked by a test-only pass.
// RUN: %expect_exit 1 nabla-test-opt %s --nabla-test-internal-error=kind=fatal 2>&1 | FileCheck %s --check-prefix=FATAL
// RUN: %expect_exit 1 nabla-test-opt %s --nabla-test-internal-error=kind=signal 2>&1 | FileCheck %s --check-prefix=CRASH
// RUN: %expect_exit 1 nabla-test-opt %s --nabla-test-internal-error=kind=abort 2>&1 | FileCheck %s --check-prefix=CRASH

// FATAL: nabla-test-opt: internal error: nabla-test-internal-error was asked to fail
// CRASH: PLEASE report this Nabla internal error with the input and command line that caused it.
// CRASH: nabla-test-opt: internal error: the tool crashed (see the stack dump above)
func.func @f() {
  return
}
