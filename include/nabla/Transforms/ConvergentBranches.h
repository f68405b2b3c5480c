//===- ConvergentBranches.h - Every thread at ops that need all -*- C++ -*-===//
//
// Some GPU operations need every thread of a group at them: CUDA's warp
// operations over a partial mask, emulated with 32-wide butterflies
// (LLVMToNabla's ConvergeWarps.cpp), and a warp's shuffles and barriers that
// a device with narrower subgroups exchanges through workgroup memory
// between barriers (GPUToSPIRV's WideShuffles.cpp), which every thread of
// the block must reach. convergeBranches makes them: the outermost scf.if
// around such an op whose condition may differ between a block's threads is
// if-converted. Its ops run in every thread, in place; those with effects
// (loads, stores, atomics, calls, loops and branches without such ops) and
// those that may trap (an integer division) run under the branch's
// predicate in an scf.if of their own that yields zeros otherwise; nested
// branches holding such ops are converted under the conjunction of the
// predicates; loops holding them stay loops, whose bounds must then be the
// same in every thread of the block; the branch's results become
// arith.select. What cannot be converted (a data-dependent loop or a call
// holding such an op, inside such a branch; a loop whose bounds may differ
// between threads) is a located error, or, where the conversion is only
// best effort, stays as it was.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TRANSFORMS_CONVERGENTBRANCHES_H
#define NABLA_TRANSFORMS_CONVERGENTBRANCHES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

#include <functional>
#include <string>

namespace nabla {

struct ConvergenceOptions {
  /// The ops every thread must run.
  std::function<bool(mlir::Operation *)> mustReach;
  /// Ops (among mustReach's) whose single result is the ballot of the lanes
  /// running them (`nabla.active_lanes`), replaced by `ballot` of the
  /// predicate they run under; none when unset.
  std::function<bool(mlir::Operation *)> activeLanes;
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)>
      ballot;
  /// Whether a branch that cannot be converted is a located error (else it
  /// stays as it was).
  bool required = true;
  /// For the errors: "cannot make every <who> reach this <what>".
  std::string who = "thread of the block";
  std::string what = "operation";
};

/// True if `value` is the same in every thread of a block: a constant, an
/// argument of a kernel (gpu.func), a block id or size, a grid size, or a
/// pure function of those.
bool isBlockUniform(mlir::Value value);

/// If-converts the branches of `root` around the ops `options` names (see
/// the file comment).
mlir::LogicalResult convergeBranches(mlir::Operation *root,
                                     const ConvergenceOptions &options);

} // namespace nabla

#endif // NABLA_TRANSFORMS_CONVERGENTBRANCHES_H
