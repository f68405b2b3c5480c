//===- ChildProcess.cpp - Helper programs a tool runs ---------------------===//
//
// Running children are listed so that the signal handlers kill them: a
// handler of SIGINT, SIGTERM and SIGHUP kills the children, removes the
// temporary files (registered with RemoveFileOnSignal; RunInterruptHandlers)
// and then hands the signal to the handler it replaced (a tool's: LLVM's,
// which ends the tool as it would have; in Python's interpreter, Python's,
// so that Ctrl-C stays a KeyboardInterrupt), or ends the tool; crashes go
// through LLVM's handlers (and the tool guard), which call a handler added
// here. The list is a fixed array of atomics: the handlers only read it and
// call kill.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/ChildProcess.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"

#include <atomic>
#include <csignal>
#include <iterator>
#include <mutex>
#include <sys/types.h>

using namespace nabla;

namespace {

/// Process ids of the running children (0: a free slot).
constexpr unsigned kMaxChildren = 64;
std::atomic<llvm::sys::procid_t> children[kMaxChildren];

void killChildren() {
  for (std::atomic<llvm::sys::procid_t> &child : children)
    if (llvm::sys::procid_t pid = child.load())
      ::kill(pid, SIGKILL);
}

void killChildrenOnCrash(void *) { killChildren(); }

/// The interrupt signals and the actions the handlers replaced.
constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction replaced[std::size(kInterruptSignals)];

void onInterrupt(int signal, siginfo_t *info, void *context) {
  killChildren();
  llvm::sys::RunInterruptHandlers();
  for (size_t k = 0; k < std::size(kInterruptSignals); ++k) {
    if (kInterruptSignals[k] != signal)
      continue;
    const struct sigaction &previous = replaced[k];
    if (previous.sa_flags & SA_SIGINFO) {
      if (previous.sa_sigaction)
        return previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_DFL) {
      return previous.sa_handler(signal);
    }
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

/// Installs the handlers once (after LLVM's, which they replace for the
/// interrupt signals).
void installHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::sys::AddSignalHandler(killChildrenOnCrash, nullptr);
    for (size_t k = 0; k < std::size(kInterruptSignals); ++k) {
      // An ignored signal (nohup's SIGHUP) stays ignored.
      struct sigaction current = {};
      ::sigaction(kInterruptSignals[k], nullptr, &current);
      if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)
        continue;
      struct sigaction action = {};
      action.sa_sigaction = onInterrupt;
      action.sa_flags = SA_SIGINFO;
      sigemptyset(&action.sa_mask);
      ::sigaction(kInterruptSignals[k], &action, &replaced[k]);
    }
  });
}

} // namespace

TemporaryFile::~TemporaryFile() {
  if (name.empty())
    return;
  llvm::sys::fs::remove(name);
  llvm::sys::DontRemoveFileOnSignal(name);
}

std::error_code TemporaryFile::create(llvm::StringRef prefix,
                                      llvm::StringRef suffix, int *fd) {
  std::error_code error =
      fd ? llvm::sys::fs::createTemporaryFile(prefix, suffix, *fd, name)
         : llvm::sys::fs::createTemporaryFile(prefix, suffix, name);
  if (!error)
    llvm::sys::RemoveFileOnSignal(name);
  return error;
}

int nabla::runChildProcess(
    llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
    llvm::ArrayRef<std::optional<llvm::StringRef>> redirects,
    std::string &error) {
  installHandlers();
  bool failed = false;
  llvm::sys::ProcessInfo child =
      llvm::sys::ExecuteNoWait(program, args, std::nullopt, redirects,
                               /*MemoryLimit=*/0, &error, &failed);
  if (failed)
    return -1;
  std::atomic<llvm::sys::procid_t> *slot = nullptr;
  for (std::atomic<llvm::sys::procid_t> &candidate : children) {
    llvm::sys::procid_t empty = 0;
    if (candidate.compare_exchange_strong(empty, child.Pid)) {
      slot = &candidate;
      break;
    }
  }
  llvm::sys::ProcessInfo done =
      llvm::sys::Wait(child, /*SecondsToWait=*/std::nullopt, &error);
  if (slot)
    slot->store(0);
  return done.ReturnCode;
}
