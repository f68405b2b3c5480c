//===- ReverseMode.h - Reverse-mode derivative emission ---------*- C++ -*-===//
//
// The VJP emitter of nabla-differentiate.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_REVERSEMODE_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_REVERSEMODE_H

#include "ActivityAnalysis.h"
#include "RecordShadows.h"

namespace nabla {

/// Deterministic accumulation (`nabla-differentiate{deterministic=true}`):
/// adjoints many threads add into one element are summed in a fixed order.
/// `scratch` (a kernel adjoint's trailing `memref<?xi32>`, else null) holds
/// the per-block partials of kernel parameters' elements; `wordsPerBlock`
/// returns how many of its words each block uses after the counter.
struct OrderedAccumulation {
  bool enabled = false;
  mlir::Value scratch;
  int64_t wordsPerBlock = 0;
};

/// Per-loop hints of reverse mode: a bound on an scf.for's trip count (the
/// loop is then taped, and the bound checked when the kernel runs) and the
/// snapshots of a checkpointed loop.
inline constexpr llvm::StringLiteral kMaxTripCountAttrName =
    "nabla.max_trip_count";
inline constexpr llvm::StringLiteral kCheckpointsAttrName = "nabla.checkpoints";
/// Set by reverse mode's preparation on the scf.for a halving do-while
/// became (`for (s = s0; s > 0; s >>= 1)`, CountedWhileLoops.cpp): the
/// position of the halved value among the loop's values.
inline constexpr llvm::StringLiteral kHalvingCounterAttrName =
    "nabla.halving_counter";

/// How loops are reversed (nabla-differentiate's options): `checkpoints`
/// snapshots per checkpointed loop, taped loops up to `tapeBudget` bytes of
/// private memory per thread.
struct LoopReversalOptions {
  int64_t checkpoints = 8;
  int64_t tapeBudget = 4096;
  /// Split mode: the forward and the reverse sweep become two functions
  /// (SplitDerivative.h), so nothing the reverse needs may live in private
  /// memory or be recomputed from memory: every loop is taped in the global
  /// tape (nabla.tape), Jacobians too, and no loop is checkpointed.
  bool split = false;
  /// The differentiated function's arguments that are a kernel's
  /// attributions (kAttributionArgAttrName): contents dead at its exit,
  /// shadows zero at its entry.
  llvm::SmallVector<unsigned> attributions;
  /// The differentiated function's integer arguments that have one value
  /// across the grid at every call of the derivative (uniformOperands).
  llvm::SmallVector<unsigned> uniformArgs;
};

/// True if `v` has one value across the grid (or, `perBlock`, the block):
/// constants, launch sizes, block ids (`perBlock`), block arguments
/// `isUniformArg` accepts, and pure arith of those.
bool isUniformAcrossThreads(
    mlir::Value v, bool perBlock,
    llvm::function_ref<bool(mlir::BlockArgument)> isUniformArg);

/// The callee arguments of `request` (a derivative request) whose operands
/// are integers with one value across the grid: computed in arith from
/// constants, launch sizes and the scalar parameters of the kernel the
/// request is in (ExclusiveAccess.cpp).
llvm::SmallVector<unsigned>
uniformOperands(mlir::Operation *request, llvm::ArrayRef<Activity> activities);

/// True if `value` (an integer argument) may reach an index of a memory
/// access, through arith or into a call or a region (ExclusiveAccess.cpp).
bool indexesMemory(mlir::Value value);

/// Emits at `builder` (the derivative function's entry) the reverse mode of
/// `body`: the forward sweep, the reverse sweep seeded with `seeds`, and the
/// return of primal results and gradients. `remarks` reports every kept
/// atomic accumulation. `forwardEnd`, when given, receives the forward
/// sweep's last op in the entry block (null when it emitted none): where
/// split mode cuts the function.
mlir::LogicalResult emitReverseDerivative(
    mlir::OpBuilder &builder, mlir::Block &body, mlir::func::ReturnOp ret,
    const Activities &act, llvm::ArrayRef<Activity> args,
    llvm::ArrayRef<Activity> rets, llvm::ArrayRef<mlir::Value> primalArgs,
    llvm::ArrayRef<mlir::Value> shadowArgs, mlir::ValueRange seeds,
    bool remarks, OrderedAccumulation &ordering,
    const LoopReversalOptions &loops, RuleFinder findRule,
    RecordShadows &records, mlir::Operation **forwardEnd = nullptr);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_REVERSEMODE_H
