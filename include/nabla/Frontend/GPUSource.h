//===- GPUSource.h - CUDA and HIP source to device LLVM IR ------*- C++ -*-===//
//
// The first step of Nabla's source front end: clang-22 compiles a CUDA or
// HIP source for the device only (no CUDA libraries linked: libdevice and
// OCML calls stay calls, which the raise understands), with line tables so
// that every later diagnostic points at the source line, the parameters'
// names kept, and Nabla's Enzyme header (enzyme.h) on the include path. The
// LLVM IR it produces goes through importLLVMIR and --nabla-raise-llvm like
// any frontend's IR. `nabla-run FILE.cu` and the Python package's
// `nabla.cuda` both compile through here, with one command line.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_FRONTEND_GPUSOURCE_H
#define NABLA_FRONTEND_GPUSOURCE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace nabla {

/// The source languages clang compiles for Nabla.
enum class GPUSourceLanguage { CUDA, HIP };

/// The language of a source file by its extension (`.cu`, `.hip`), if it is
/// one.
std::optional<GPUSourceLanguage> getGPUSourceLanguage(llvm::StringRef path);

/// How to compile a source.
struct GPUSourceOptions {
  GPUSourceLanguage language = GPUSourceLanguage::CUDA;
  /// The device clang compiles for (`sm_80`, `gfx90a` when empty). Nabla
  /// retargets the raised kernels; this only selects the headers' view.
  std::string arch;
  /// More clang arguments, after Nabla's so that they override them (`-O1`,
  /// `-DN=4`, `-I dir`).
  std::vector<std::string> extraArgs;
  /// Where to look for Nabla's share/nabla/include (enzyme.h): this
  /// directory and its parents. The tools pass their own directory, the
  /// Python package its package directory.
  std::string searchFrom;
  /// Reuse clang's output from the kernel cache (KernelCache.h) when the
  /// command, the source and every file it included are unchanged; false
  /// (a tool's --no-cache) neither reads nor writes it.
  bool useCache = true;
};

/// What clang produced: the device LLVM IR (text) and the warnings it
/// printed.
struct GPUSourceResult {
  std::string llvmIR;
  std::string warnings;
};

/// clang rejected a source: its diagnostics as it printed them
/// (`file.cu:LINE:COL: error: ...`). Other failures (no clang, no
/// temporary file) are plain string errors.
class ClangDiagnosticsError : public llvm::ErrorInfo<ClangDiagnosticsError> {
public:
  static char ID;
  explicit ClangDiagnosticsError(std::string diagnostics)
      : diagnostics(std::move(diagnostics)) {}
  void log(llvm::raw_ostream &os) const override { os << diagnostics; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  std::string diagnostics;
};

/// The clang that compiles sources: $NABLA_CLANG, else the clang of the LLVM
/// Nabla was built with, else `clang-22` on PATH. An error names what was
/// tried.
llvm::Expected<std::string> findClang();

/// The directory holding Nabla's enzyme.h: `share/nabla/include` under
/// `from` or one of its parents, if there is one.
std::optional<std::string> findFrontendHeaders(llvm::StringRef from);

/// The clang command line that compiles `path` to `output` (program first).
std::vector<std::string> getGPUSourceCommand(llvm::StringRef clang,
                                             llvm::StringRef path,
                                             llvm::StringRef output,
                                             const GPUSourceOptions &options);

/// Compiles the source file `path`. A clang failure is a
/// ClangDiagnosticsError. With the kernel cache on, an entry keyed by
/// clang's identity, the command line, the working directory, the source's
/// name and contents lists the files clang included (its -MD list); a second
/// entry keyed by that and the current identity (size, modification time) of
/// each of them holds the IR and the warnings: a hit skips clang, an edited
/// header is a miss.
llvm::Expected<GPUSourceResult>
compileGPUSource(llvm::StringRef path, const GPUSourceOptions &options);

/// Compiles source text as if it were the file `fileName` (a `#line`
/// directive names it, so diagnostics and debug locations show
/// `fileName:LINE`). The text is written to a temporary folder: headers of
/// its own need `-I` in `options.extraArgs`.
llvm::Expected<GPUSourceResult>
compileGPUSourceText(llvm::StringRef text, llvm::StringRef fileName,
                     const GPUSourceOptions &options);

/// Compiles the source file `path` and imports its LLVM IR into the LLVM
/// dialect (importLLVMIR; locations are the source's lines), ready for
/// --nabla-raise-llvm. clang's warnings and errors are printed to
/// llvm::errs() as clang wrote them, other failures as `error: ...`; null
/// after an error.
mlir::OwningOpRef<mlir::ModuleOp>
importGPUSource(llvm::StringRef path, llvm::SourceMgr &sourceMgr,
                mlir::MLIRContext *context, const GPUSourceOptions &options);

} // namespace nabla

#endif // NABLA_FRONTEND_GPUSOURCE_H
