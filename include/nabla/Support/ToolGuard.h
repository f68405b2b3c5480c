//===- ToolGuard.h - Last line of defence of Nabla's tools ------*- C++ -*-===//
//
// Anything that still goes wrong inside a tool after every input check (an
// LLVM fatal error, a failed allocation, a crash signal, an uncaught
// exception) ends as "<tool>: internal error: ..." and exit status 1, never a
// core dump or an abort. Installed by each tool's main after InitLLVM.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_TOOLGUARD_H
#define NABLA_SUPPORT_TOOLGUARD_H

namespace nabla {

/// Installs the fatal-error, bad-alloc, crash-signal and terminate handlers
/// for a tool named `toolName` (a string literal: it must outlive the
/// process).
void installToolGuard(const char *toolName);

} // namespace nabla

#endif // NABLA_SUPPORT_TOOLGUARD_H
