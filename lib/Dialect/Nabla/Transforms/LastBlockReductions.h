//===- LastBlockReductions.h - Cross-block reads reverse mode refuses -*- C++ -*-===//
//
// The "last block" idiom of single-pass reductions (CUDA's
// threadFenceReduction sample, llm.c's layernorm_backward kernels 5-10):
// every block writes its partial result to global scratch, fences, takes a
// ticket from an atomic counter, and the block whose ticket is the grid's
// size minus one reads every other block's partial. In reverse, that block's
// adjoint would have to reach the other blocks before their own reverse
// sweeps run, an order one launch cannot give; which block it is depends on
// arrival order. Reverse mode refuses such a kernel with the reason instead
// of an error about what the idiom's memory looks like.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_LASTBLOCKREDUCTIONS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_LASTBLOCKREDUCTIONS_H

#include "ActivityAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nabla {

/// Fails, with an error at the atomic and a note at the test, when
/// `function` has an scf.if touching active values whose condition compares
/// an atomic's old value (directly, or stored to memory and loaded back)
/// with a value computed from the grid's size.
mlir::LogicalResult checkLastBlockReductions(mlir::func::FuncOp function,
                                             const Activities &act);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_LASTBLOCKREDUCTIONS_H
