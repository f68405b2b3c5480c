//===- Compile.h - Compile a module to target artifacts ---------*- C++ -*-===//
//
// The library behind `nabla-compile` and `nabla.compile`: runs one of the
// `nabla-to-*` pipelines on a module and returns the artifacts (one per GPU
// module and object format) with a deterministic manifest describing the
// kernels, their parameter ABI on the target, workgroup sizes and relocation
// records.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_COMPILE_COMPILE_H
#define NABLA_COMPILE_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nabla {

enum class CompileTarget { NVVM, ROCDL, SPIRV, Metal };

/// Parses "nvvm", "rocdl", "spirv" or "metal".
std::optional<CompileTarget> parseCompileTarget(llvm::StringRef name);
llvm::StringRef stringifyCompileTarget(CompileTarget target);

struct CompileOptions {
  CompileTarget target = CompileTarget::SPIRV;
  /// Chip for NVVM/ROCDL; empty selects the pipeline's default.
  std::string chip;
  std::string abi = "v2";
  /// reloc-lower strategy; empty: the ABI's default for the target.
  std::string relocStrategy;
  int optLevel = 2;
  /// Workgroup size of kernels without known_block_size (SPIR-V, Metal).
  llvm::SmallVector<int64_t, 3> workgroupSize;
  /// Subgroup size of the device (SPIR-V, Metal).
  unsigned subgroupSize = 32;
  /// SPIR-V, Metal: float atomic add as a compare-exchange loop.
  bool emulateFloatAtomics = false;
  /// SPIR-V, Metal: bytes of dynamic shared memory (`extern __shared__`) the
  /// kernels are launched with, compiled in; -1 when not given.
  int64_t dynamicSharedMemory = -1;
  /// SPIR-V: the device's loop-iteration limit (runtime::loopIterationLimit),
  /// reported when a thread reaches it; 0: no check.
  int64_t loopLimit = 0;
  /// When set, only this kernel and what it needs are compiled
  /// (keepOnlyKernel): what nabla-run and nabla.run launch.
  std::string onlyKernel;
  /// Contents of relocation records known ahead of time, by key: the
  /// object's bytes (little-endian, row-major) and its NumPy dtype ("f4",
  /// "i8"...). A record given here gets them as its `value` before
  /// reloc-lower, so abi=v1's materialize (or bake-or-materialize) can copy
  /// it into the kernels: the ahead-of-time form of a baked object.
  std::map<std::string, std::pair<std::string, std::vector<uint8_t>>>
      relocValues;
};

/// One output file: `<module>.<extension>`.
struct Artifact {
  std::string module;
  std::string extension;
  std::string contents;

  std::string fileName() const { return module + "." + extension; }
};

struct CompileResult {
  std::vector<Artifact> artifacts;
  llvm::json::Object manifest;
};

/// Lowers `module` in place with the target's pipeline and collects the
/// artifacts and manifest. Diagnostics go to the context's handler.
mlir::FailureOr<CompileResult> compileModule(mlir::ModuleOp module,
                                             const CompileOptions &options);

/// Erases from `module` everything kernel `name` does not need (other
/// kernels, functions, records, device modules and host code), following
/// the symbols its ops name, derivative requests and the custom derivative
/// rules of the functions reached. Fails, changing nothing, when no kernel or
/// nabla.kernel_adjoint of that name exists.
mlir::LogicalResult keepOnlyKernel(mlir::ModuleOp module, llvm::StringRef name);

/// The manifest's description of the kernels of `module` (before lowering)
/// on `options.target`; exposed for the runtime and tests.
llvm::json::Array describeKernels(mlir::ModuleOp module,
                                  const CompileOptions &options);

} // namespace nabla

#endif // NABLA_COMPILE_COMPILE_H
