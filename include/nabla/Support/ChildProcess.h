//===- ChildProcess.h - Helper programs a tool runs ---------------*- C++
//-*-===//
//
// Nabla's tools run other programs (ptxas, clang) on temporary files. When
// the tool is interrupted or killed by a signal it can handle (SIGINT,
// SIGTERM, a crash), the running children are killed and the temporary
// files removed, instead of a child running on (ptxas can take gigabytes)
// and files left in /tmp.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_CHILDPROCESS_H
#define NABLA_SUPPORT_CHILDPROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <system_error>

namespace nabla {

/// A temporary file, removed when this goes out of scope and when the tool
/// is interrupted.
class TemporaryFile {
public:
  TemporaryFile() = default;
  TemporaryFile(const TemporaryFile &) = delete;
  TemporaryFile &operator=(const TemporaryFile &) = delete;
  ~TemporaryFile();

  /// Creates the file (`<prefix>-*.<suffix>` in the system's temporary
  /// directory); `fd`, when given, receives an open descriptor.
  std::error_code create(llvm::StringRef prefix, llvm::StringRef suffix,
                         int *fd = nullptr);
  llvm::StringRef path() const { return name; }

private:
  llvm::SmallString<128> name;
};

/// Runs `program` with `args` (args[0] its name) and waits for it; the
/// redirects are those of llvm::sys::ExecuteAndWait. The child is killed if
/// the tool is interrupted meanwhile. Returns its exit code, or -1 with
/// `error` when it could not run or ended by a signal.
int runChildProcess(llvm::StringRef program,
                    llvm::ArrayRef<llvm::StringRef> args,
                    llvm::ArrayRef<std::optional<llvm::StringRef>> redirects,
                    std::string &error);

} // namespace nabla

#endif // NABLA_SUPPORT_CHILDPROCESS_H
