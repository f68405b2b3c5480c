//===- Manifest.h - The kernel manifest written by nabla-compile -*- C++
//-*-===//
//
// Typed view of manifest.json (see docs/Targets.md): kernels, their
// parameters and the target's parameter ABI.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_MANIFEST_H
#define NABLA_RUNTIME_MANIFEST_H

#include "nabla/Runtime/Device.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nabla::runtime {

/// One kernel parameter as written in MLIR.
struct ParamInfo {
  unsigned index = 0;
  bool isBuffer = false;
  /// The MLIR type ("memref<?xf32>", "index", "f32"...).
  std::string type;
  /// Buffers: element type and shape (-1 for dynamic extents).
  std::string element;
  std::vector<int64_t> shape;
  /// The key of the relocation record this parameter carries (the table
  /// strategy adds one per record); empty for the kernel's own parameters.
  std::string relocKey;
  /// For the i32 presence flag of an optional buffer (the kernel tests that
  /// pointer for null): the buffer parameter's index; -1 otherwise. The
  /// launch sets it (0 when the argument is null), the user passes none.
  int presenceOf = -1;
  /// For the i32 parameter of a gradient kernel that keeps the shadow of
  /// dynamic shared memory after the primal's: the launch sets it to the
  /// launch's bytes (and reserves twice as many), the user passes none.
  bool dynamicSharedBytes = false;

  /// The kernel's global-memory tape (reverse mode's values of loops with
  /// trip counts known at run time): the launch allocates it from the
  /// kernel's tape formula, the user passes none.
  bool tape = false;
  /// A split-mode kernel's tape: the caller passes it (the same buffer to the
  /// augmented forward and to the reverse); the launch checks its size.
  bool splitTape = false;

  /// Whether the user passes an argument for this parameter (the launch
  /// sets relocation tables, presence flags, the dynamic shared size and
  /// the tape).
  bool isOwn() const {
    return relocKey.empty() && presenceOf < 0 && !dynamicSharedBytes && !tape;
  }
};

/// An integer formula over a launch (the manifest's `[op, bits, ...]`
/// arrays): `op` is an arith op name (addi, muli, divui, select, cmpi...),
/// "arg" (operand: the parameter index), "const" (value), or a launch
/// builtin ("thread_id", "block_id", "block_dim", "grid_dim"; value: the
/// dimension). Values are `bits` wide (index: 64).
struct SizeExpr {
  std::string op;
  unsigned bits = 64;
  int64_t value = 0;
  /// cmpi's predicate ("slt", "ne", ...).
  std::string predicate;
  std::vector<SizeExpr> operands;
};

/// A kernel's global-memory tape: parameter `param`, 4 * words bytes per
/// thread of the grid.
struct TapeInfo {
  unsigned param = 0;
  SizeExpr wordsPerThread;
  /// The formula as text, for messages.
  std::string formula;
  /// The formula reads `capacity` (slots per execution of loops whose trip
  /// counts are known only as they run): the buffer has two more words in
  /// front of the threads', the capacity the launcher gives (first) and the
  /// largest a thread needed (second; 0 when none needed more).
  bool growable = false;
};

/// A SPIR-V descriptor binding (spirv/metal).
struct BindingInfo {
  unsigned binding = 0;
  unsigned param = 0;
  /// "buffer", "scalar", "size", "global" (a module global's buffer, after
  /// the size bindings; no parameter) or "printf" (the printf buffer, last;
  /// no parameter).
  std::string kind;
  std::string type;
  int dim = -1;
  /// "global" bindings: the global's name.
  std::string global;
};

/// One LLVM-level kernel argument (nvvm/rocdl).
struct ArgumentInfo {
  unsigned param = 0;
  /// "value", "allocated", "aligned", "offset", "size" or "stride".
  std::string field;
  std::string type;
  int dim = -1;
};

struct KernelInfo {
  std::string name;
  std::string module;
  std::vector<ParamInfo> params;
  std::optional<std::vector<int64_t>> workgroupSize;
  /// Dynamic shared memory (`extern __shared__`): absent when the kernel
  /// uses none; the bytes compiled in (SPIR-V, Metal), or -1 (any size,
  /// given at launch: NVVM, ROCDL).
  std::optional<int64_t> dynamicSharedMemory;
  std::vector<BindingInfo> bindings;
  std::vector<ArgumentInfo> arguments;
  std::optional<TapeInfo> tape;
  /// The caller-owned tape of a split-mode kernel (manifest `split_tape`).
  std::optional<TapeInfo> splitTape;
};

/// A relocation record and how the kernels were compiled to receive it.
struct RelocationInfo {
  std::string key;
  std::string module;
  /// "patch", "table", "defer", "bake" or "materialize".
  std::string strategy;
  /// The global a loader writes (patch) or resolves (defer).
  std::string symbol;
  std::string type;
  /// A pointer record (patch writes the object's address into a slot).
  bool pointer = false;
  bool constant = false;
  /// Memref records: element type and shape (-1 for dynamic extents).
  std::string element;
  std::vector<int64_t> shape;
  std::string shadowOf;
};

struct Manifest {
  std::string target;
  std::string chip;
  /// Module name → artifact file names.
  std::map<std::string, std::vector<std::string>> modules;
  std::vector<KernelInfo> kernels;
  std::vector<RelocationInfo> relocations;
  /// Module name → its printf buffer (SPIR-V modules whose kernels print).
  std::map<std::string, PrintfLayout> printf;
  /// Module name → its runtime-owned globals (SPIR-V modules that have
  /// module globals: nabla-bind-module-globals).
  std::map<std::string, ModuleGlobals> globals;

  const KernelInfo *findKernel(const std::string &name) const;
};

/// Parses manifest JSON text; on failure returns false and sets `error`.
bool parseManifest(const std::string &text, Manifest &manifest,
                   std::string &error);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_MANIFEST_H
