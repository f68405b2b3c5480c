//===- ZeroTripLoops.cpp - scf.for results that survive zero trips --------===//
//
// Upstream's SCF-to-SPIR-V lowering returns an `scf.for`'s results through
// Function variables that only the loop body stores to: a loop that runs
// zero times leaves them unwritten, and the results read as whatever the
// variable holds (zero on lavapipe) instead of the init values. Before the
// conversion, each result of a loop that may run zero times is therefore
// replaced by `select(lb < ub, result, init)`, the value scf.for defines.
// `scf.while` (its `before` region always runs and stores) and `scf.if`
// (both branches store) need no such guard.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

/// True if `loop` runs at least once whatever its operands' values.
static bool alwaysRuns(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  if (!lower || !upper)
    return false;
  return loop.getUnsignedCmp()
             ? static_cast<uint64_t>(*lower) < static_cast<uint64_t>(*upper)
             : *lower < *upper;
}

void nabla::selectInitsOfZeroTripLoops(Operation *root) {
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) {
    if (loop.getNumResults() != 0 && !alwaysRuns(loop))
      loops.push_back(loop);
  });
  for (scf::ForOp loop : loops) {
    OpBuilder builder(loop->getContext());
    builder.setInsertionPointAfter(loop);
    Location loc = loop.getLoc();
    Value runs =
        arith::CmpIOp::create(builder, loc,
                              loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                                    : arith::CmpIPredicate::slt,
                              loop.getLowerBound(), loop.getUpperBound());
    for (auto [result, init] : llvm::zip(loop.getResults(), loop.getInits())) {
      // SPIR-V selects between pointers only with variable pointers; a memref
      // result has no Function-variable lowering to guard anyway.
      if (!result.getType().isIntOrIndexOrFloat() &&
          !isa<VectorType>(result.getType()))
        continue;
      if (result.use_empty())
        continue;
      auto select = arith::SelectOp::create(builder, loc, runs, result, init);
      result.replaceAllUsesExcept(select.getResult(), select);
    }
    if (runs.use_empty())
      runs.getDefiningOp()->erase();
  }
}
