//===- CountedWhileLoops.h - Do-while loops with a counter as scf.for -*- C++ -*-===//
//
// Reverse mode's preparation of the loops clang emits: a rotated C loop
// raised from LLVM IR is an scf.while whose before region runs the body and
// tests the incremented counter. Known as a for loop, such a loop can be
// taped by its trip count (a static bound, or one computed when the kernel
// is launched) instead of only checkpointed.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_COUNTEDWHILELOOPS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_COUNTEDWHILELOOPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nabla {

/// Rewrites every scf.while of `function` of the form
///   scf.while (%i = %lb, ...) { body; %next = %i + c;
///                               scf.condition(%next PRED %n) %next, ... }
///   do { ^bb(...): scf.yield ... }   // forwards its arguments
/// with a step c > 0 (a constant, or under `slt`/`ult` a value defined
/// outside the loop: `i += blockDim.x`), a bound %n defined outside the loop and PRED
/// one of ne, slt, ult (either operand order), into an scf.for of
/// max(1, ceildiv(%n - %lb, c)) iterations (the body runs at least once)
/// carrying the same values; a test of the counter before its increment
/// (`%i PRED %n`: C's `for (i = lb; i <= n; ++i)`, rotated) runs
/// max(0, ceildiv(%n - %lb, c)) + 1 times. With `ne` the counter is assumed to reach %n
/// (a loop that would wrap around the integer range is UB-adjacent in C and
/// counted as one iteration when %n == %lb).
/// Also rewrites halving do-whiles, `for (s = s0; s > 0; s >>= 1)` (a value
/// halved by shrui/shrsi 1 or divui/divsi 2, tested `> 0`/`!= 0` after the
/// step or `> 1`/`>= 2` before it), into an scf.for of max(1, bits(s0))
/// iterations (1 for s0 <= 0 under a signed halving or test), marked with
/// `nabla.max_trip_count` = the type's width (the loop can be taped) and
/// `nabla.halving_counter` = the halved value's position.
void countWhileLoops(mlir::func::FuncOp function);

/// `predicate` with its operands exchanged (`a < b` is `b > a`).
mlir::arith::CmpIPredicate swappedPredicate(mlir::arith::CmpIPredicate predicate);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_COUNTEDWHILELOOPS_H
