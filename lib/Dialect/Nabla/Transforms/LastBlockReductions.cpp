//===- LastBlockReductions.cpp - Cross-block reads reverse mode refuses ---===//
//
// See LastBlockReductions.h.
//
//===----------------------------------------------------------------------===//

#include "LastBlockReductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace nabla;

namespace {

/// How many definitions up the searches below look.
constexpr unsigned kDepth = 8;

/// True if `value` is computed (through arithmetic) from the grid's size.
bool fromGridSize(Value value, unsigned depth = kDepth) {
  Operation *def = value.getDefiningOp();
  if (!def || depth == 0)
    return false;
  if (isa<gpu::GridDimOp>(def))
    return true;
  if (!isa<arith::ArithDialect>(def->getDialect()))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return fromGridSize(operand, depth - 1);
  });
}

/// The atomic whose old value `value` is, through casts, or through a
/// store of it to memory that `value` loads back (the ticket one thread
/// takes and shares through shared memory). Null otherwise.
Operation *ticketOf(Value value, func::FuncOp function,
                    unsigned depth = kDepth) {
  Operation *def = value.getDefiningOp();
  if (!def || depth == 0)
    return nullptr;
  if (isa<memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(def))
    return def;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
          arith::ExtSIOp, arith::TruncIOp, arith::BitcastOp>(def))
    return ticketOf(def->getOperand(0), function, depth - 1);
  auto load = dyn_cast<memref::LoadOp>(def);
  if (!load)
    return nullptr;
  Value source = getViewSource(load.getMemRef());
  Operation *found = nullptr;
  function.walk([&](memref::StoreOp store) {
    if (getViewSource(store.getMemRef()) != source)
      return WalkResult::advance();
    found = ticketOf(store.getValueToStore(), function, depth - 1);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

} // namespace

LogicalResult nabla::checkLastBlockReductions(func::FuncOp function,
                                              const Activities &act) {
  WalkResult result = function.walk([&](scf::IfOp branch) {
    // The comparisons the condition combines (`&&`, `||`, `!`: the guarded
    // code may be either branch, `if (t != last || tid) {} else {...}`).
    SmallVector<arith::CmpIOp> tests;
    SmallVector<Value> work{branch.getCondition()};
    while (!work.empty()) {
      Value cond = work.pop_back_val();
      Operation *def = cond.getDefiningOp();
      if (auto test = dyn_cast_or_null<arith::CmpIOp>(def))
        tests.push_back(test);
      else if (isa_and_nonnull<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(
                   def))
        work.append({def->getOperand(0), def->getOperand(1)});
    }
    Operation *ticket = nullptr;
    for (arith::CmpIOp test : tests) {
      bool grid = false;
      Operation *atomic = nullptr;
      for (Value side : {test.getLhs(), test.getRhs()}) {
        if (fromGridSize(side))
          grid = true;
        else if (Operation *found = ticketOf(side, function))
          atomic = found;
      }
      if (grid && atomic)
        ticket = atomic;
    }
    if (!ticket || !regionTouchesActive(branch, act))
      return WalkResult::advance();
    InFlightDiagnostic diag =
        ticket->emitOpError()
        << "takes a ticket that decides which block runs code reading what "
           "other blocks wrote (the last block to arrive, a single-pass "
           "reduction): reverse mode cannot differentiate it, since that "
           "block's adjoints would have to reach the other blocks before "
           "their own reverse sweeps, an order one launch does not give";
    diag.attachNote(branch.getLoc())
        << "the code the ticket guards; split the kernel here into two "
           "launches (each differentiable), or give the function a custom "
           "derivative (nabla.custom_derivative)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
