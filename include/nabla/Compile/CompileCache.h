//===- CompileCache.h - compileModule through the kernel cache --*- C++ -*-===//
//
// What makes two compilations the same, for the kernel cache
// (nabla/Support/KernelCache.h): the module as parsed (printed in generic
// form with its locations), every CompileOptions field, Nabla's and
// LLVM/MLIR's versions, the binary holding the compiler (its path, size and
// modification time, so that a rebuilt Nabla never reuses an older one's
// artifacts), and the files outside it that the target's back end reads
// (NVVM: the CUDA toolkit's libdevice and ptxas; ROCDL: the ROCm device
// libraries and ld.lld). A hit returns the stored artifacts and manifest
// without running the pipeline; a miss compiles and stores the result unless
// the compilation failed or reported anything (a warning or remark would
// otherwise be lost on the next hit).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_COMPILE_COMPILECACHE_H
#define NABLA_COMPILE_COMPILECACHE_H

#include "nabla/Compile/Compile.h"
#include "nabla/Support/KernelCache.h"

#include <string>

namespace nabla {

/// What outside the module and options a compilation depends on.
struct CompileEnvironment {
  std::string nablaVersion;
  std::string llvmVersion;
  /// Path, size and modification time of the binary holding the compiler.
  std::string compilerIdentity;
  /// The external files the target's back end reads, as a key fragment.
  std::string toolchainIdentity;

  /// The environment of this process for `target`.
  static CompileEnvironment current(CompileTarget target);
};

/// The cache key of compiling `module` with `options` in `environment`.
std::string getCompileCacheKey(mlir::ModuleOp module,
                               const CompileOptions &options,
                               const CompileEnvironment &environment);

/// compileModule through `cache`: on a hit `module` is left as it is and
/// the stored result returned; otherwise compileModule's result, stored when
/// it succeeded without diagnostics. With a disabled cache, compileModule.
mlir::FailureOr<CompileResult>
compileModuleCached(mlir::ModuleOp module, const CompileOptions &options,
                    const KernelCache &cache);

} // namespace nabla

#endif // NABLA_COMPILE_COMPILECACHE_H
