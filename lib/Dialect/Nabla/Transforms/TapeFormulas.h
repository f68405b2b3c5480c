//===- TapeFormulas.h - Tape sizes as formulas of a launch ------*- C++ -*-===//
//
// The words per thread of a kernel's global-memory tape as a formula the
// launchers evaluate (JSON, docs/Targets.md) and people read (text), and
// the same computation cloned into host code before a launch
// (nabla-materialize-tapes). Private to lib/Dialect/Nabla/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_TAPEFORMULAS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_TAPEFORMULAS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace nabla::tapes {

using mlir::Value;

/// A formula over the kernel's parameters: JSON for the launchers
/// (docs/Targets.md: `[op, bits, operands...]`, leaves `["arg", bits, k]`
/// and `["const", bits, v]`) and text for people.
struct Formula {
  std::string json, text;
  /// Set when the formula is a constant.
  std::optional<int64_t> constant;
};

/// Builds formulas of values of one kernel; the first value that is not a
/// function of its integer scalar parameters, constants, elements of its
/// integer buffers and launch builtins is kept in `blocker`.
class FormulaBuilder {
public:
  explicit FormulaBuilder(mlir::gpu::GPUFuncOp kernel) : kernel(kernel) {}

  std::optional<Formula> build(Value value) {
    auto it = memo.find(value);
    if (it != memo.end())
      return it->second;
    std::optional<Formula> result = compute(value);
    if (result)
      memo[value] = *result;
    return result;
  }

  Value blocker;

private:
  std::optional<Formula> fail(Value value) {
    if (!blocker)
      blocker = value;
    return std::nullopt;
  }

  std::optional<Formula> compute(Value value);
  /// The kernel parameter `memref` is, if it is a 1-D buffer of integers.
  std::optional<unsigned> bufferParameter(Value memref);

  mlir::gpu::GPUFuncOp kernel;
  llvm::DenseMap<Value, Formula> memo;
};

/// Values of the launch builtins at a launch (null: cloned as they are).
using BuiltinValues =
    llvm::function_ref<Value(const char *name, mlir::gpu::Dimension dim)>;

/// Clones the (pure) computation of `value` with `mapping` (the kernel's
/// parameters mapped) at `b`'s insertion point, with what the regions of
/// its ops (a guarded read) use from outside; launch builtins come from
/// `builtins` when given.
Value rematerialize(mlir::OpBuilder &b, Value value, mlir::IRMapping &mapping,
                    BuiltinValues builtins = nullptr);

/// The kernel parameters whose elements or size the computation of `value`
/// reads (memref.load, memref.dim, also inside its ops' regions), into
/// `buffers`.
void collectReadBuffers(Value value, llvm::DenseSet<Value> &seen,
                        llvm::SetVector<Value> &buffers);

/// True if `value` is computed from a thread's or block's id.
bool readsIds(Value value, llvm::DenseSet<Value> &seen);

} // namespace nabla::tapes

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_TAPEFORMULAS_H
