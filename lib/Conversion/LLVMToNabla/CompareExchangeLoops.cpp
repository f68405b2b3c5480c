//===- CompareExchangeLoops.cpp - Float atomics written as CAS loops ------===//
//
// CUDA has no atomicMax on floats and, before sm_60, no atomicAdd on
// doubles; production code writes them as a compare-exchange loop over the
// value's bits (the CUDA programming guide's own atomicAdd for doubles):
//
//   int old = *addr, assumed;
//   do {
//     assumed = old;
//     old = atomicCAS(addr, assumed,
//                     __float_as_int(fmaxf(val, __int_as_float(assumed))));
//   } while (assumed != old);
//
// clang makes it one loop block: a block argument `assumed`, the float op on
// its bits, `cmpxchg`, and a branch back while the exchange failed. Such a
// loop is exactly an atomic read-modify-write of the float op, and becomes
// `llvm.atomicrmw fadd/fsub/fmax/fmin` on the float: the raise then types
// the buffer as float (the loop read it as integers) and the AD
// differentiates it as the atomic it is. Other compare-exchange uses are
// left to the raise, which refuses them with a located error.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace {

/// The callee name of a direct call, or "".
StringRef getCallee(Operation *op) {
  auto call = dyn_cast_or_null<LLVM::CallOp>(op);
  if (!call || !call.getCallee())
    return "";
  return *call.getCallee();
}

/// The operand of a reinterpretation of bits (a bitcast, or libdevice's
/// `__nv_int_as_float` and friends) from `from`-typed values, or null.
Value getReinterpreted(Value value, bool toFloat) {
  Operation *def = value.getDefiningOp();
  if (auto cast = dyn_cast_or_null<LLVM::BitcastOp>(def))
    return cast.getArg();
  StringRef callee = getCallee(def);
  bool known =
      toFloat ? llvm::is_contained({"__nv_int_as_float", "__nv_uint_as_float",
                                    "__nv_longlong_as_double"},
                                   callee)
              : llvm::is_contained({"__nv_float_as_int", "__nv_float_as_uint",
                                    "__nv_double_as_longlong"},
                                   callee);
  if (!known || def->getNumOperands() != 1)
    return nullptr;
  return def->getOperand(0);
}

/// The atomic operation `combined` applies to `current` with an operand
/// from outside the loop (`operand` set to it): fadd (either side), fsub
/// (current - operand), maxnum and minnum (CUDA's fmaxf/fminf).
std::optional<LLVM::AtomicBinOp> matchCombination(Value combined,
                                                  Value current,
                                                  Block *loop,
                                                  Value &operand) {
  Operation *def = combined.getDefiningOp();
  if (!def || def->getNumOperands() != 2 || def->getNumResults() != 1)
    return std::nullopt;
  std::optional<LLVM::AtomicBinOp> kind;
  bool commutative = true;
  if (isa<LLVM::FAddOp>(def)) {
    kind = LLVM::AtomicBinOp::fadd;
  } else if (isa<LLVM::FSubOp>(def)) {
    kind = LLVM::AtomicBinOp::fsub;
    commutative = false;
  } else if (isa<LLVM::MaxNumOp>(def)) {
    kind = LLVM::AtomicBinOp::fmax;
  } else if (isa<LLVM::MinNumOp>(def)) {
    kind = LLVM::AtomicBinOp::fmin;
  } else {
    kind = llvm::StringSwitch<std::optional<LLVM::AtomicBinOp>>(
               getCallee(def))
               .Cases("__nv_fmaxf", "__nv_fmax", LLVM::AtomicBinOp::fmax)
               .Cases("__nv_fminf", "__nv_fmin", LLVM::AtomicBinOp::fmin)
               .Default(std::nullopt);
  }
  if (!kind)
    return std::nullopt;
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  auto outside = [&](Value v) { return v.getParentBlock() != loop; };
  if (lhs == current && outside(rhs))
    operand = rhs;
  else if (commutative && rhs == current && outside(lhs))
    operand = lhs;
  else
    return std::nullopt;
  return kind;
}

/// Rewrites the compare-exchange loop `loop` ends with, if it is one.
bool rewriteLoop(Block *loop) {
  auto branch = dyn_cast<LLVM::CondBrOp>(loop->getTerminator());
  if (!branch || loop->getNumArguments() != 1)
    return false;
  BlockArgument assumed = loop->getArgument(0);
  auto type = dyn_cast<IntegerType>(assumed.getType());
  if (!type || (type.getWidth() != 32 && type.getWidth() != 64))
    return false;
  // The loop continues with the exchange's old value while it failed.
  bool backOnTrue = branch.getTrueDest() == loop;
  Block *exit = backOnTrue ? branch.getFalseDest() : branch.getTrueDest();
  if ((backOnTrue ? branch.getFalseDest() : branch.getTrueDest()) == loop ||
      (backOnTrue ? branch.getTrueDest() : branch.getFalseDest()) != loop)
    return false;
  ValueRange back = backOnTrue ? branch.getTrueDestOperands()
                               : branch.getFalseDestOperands();
  if (back.size() != 1 || !exit->getArguments().empty() ||
      !(backOnTrue ? branch.getFalseDestOperands()
                   : branch.getTrueDestOperands())
           .empty())
    return false;
  auto extract = back[0].getDefiningOp<LLVM::ExtractValueOp>();
  if (!extract || extract.getPosition() != ArrayRef<int64_t>{0})
    return false;
  auto exchange = extract.getContainer().getDefiningOp<LLVM::AtomicCmpXchgOp>();
  if (!exchange || exchange->getBlock() != loop ||
      exchange.getCmp() != assumed)
    return false;
  // The exit condition: the exchange succeeded (its flag, or old ==
  // assumed), with the branch's sense to match.
  Value condition = branch.getCondition();
  bool exitsOnSuccess;
  if (auto flag = condition.getDefiningOp<LLVM::ExtractValueOp>();
      flag && flag.getContainer() == exchange.getResult() &&
      flag.getPosition() == ArrayRef<int64_t>{1}) {
    exitsOnSuccess = !backOnTrue;
  } else if (auto compare = condition.getDefiningOp<LLVM::ICmpOp>();
             compare &&
             ((compare.getLhs() == assumed &&
               compare.getRhs() == extract.getResult()) ||
              (compare.getRhs() == assumed &&
               compare.getLhs() == extract.getResult())) &&
             (compare.getPredicate() == LLVM::ICmpPredicate::eq ||
              compare.getPredicate() == LLVM::ICmpPredicate::ne)) {
    bool isEqual = compare.getPredicate() == LLVM::ICmpPredicate::eq;
    exitsOnSuccess = isEqual != backOnTrue;
  } else {
    return false;
  }
  if (!exitsOnSuccess)
    return false;
  // The new value: the float op on the assumed value's bits.
  Value newBits = exchange.getVal();
  Value combined = getReinterpreted(newBits, /*toFloat=*/false);
  if (!combined || !isa<FloatType>(combined.getType()) ||
      combined.getType().getIntOrFloatBitWidth() != type.getWidth())
    return false;
  Value operand;
  Operation *combination = combined.getDefiningOp();
  Value current;
  for (Value input : combination ? combination->getOperands() : ValueRange())
    if (Value bits = getReinterpreted(input, /*toFloat=*/true);
        bits == assumed)
      current = input;
  if (!current)
    return false;
  std::optional<LLVM::AtomicBinOp> kind =
      matchCombination(combined, current, loop, operand);
  if (!kind)
    return false;
  // Nothing else happens in the loop: no other call or memory access, and
  // the exchange's result feeds only the loop's own test and back edge.
  llvm::SmallPtrSet<Operation *, 4> knownCalls = {
      combination, newBits.getDefiningOp(), current.getDefiningOp()};
  for (Operation &op : *loop) {
    if (&op == branch.getOperation() || &op == exchange.getOperation())
      continue;
    if (isa<LLVM::CallOp>(op) ? !knownCalls.contains(&op)
                              : !isMemoryEffectFree(&op))
      return false;
  }
  // (The old value may be read after the loop, where it equals `assumed`.)
  for (Operation *user : exchange->getUsers())
    if (!isa<LLVM::ExtractValueOp>(user) ||
        (user != extract.getOperation() &&
         llvm::any_of(user->getUsers(), [&](Operation *use) {
           return use->getBlock() != loop;
         })))
      return false;

  // One atomic at the top of the loop block, which now falls through to
  // the exit; the old value's bits replace `assumed` (on exit they were
  // equal).
  OpBuilder b(loop, loop->begin());
  Location loc = exchange.getLoc();
  StringRef scope = exchange.getSyncscope() ? *exchange.getSyncscope() : "";
  Value old = LLVM::AtomicRMWOp::create(
      b, loc, *kind, exchange.getPtr(), operand, exchange.getSuccessOrdering(),
      scope, exchange.getAlignment().value_or(0), exchange.getVolatile_());
  Value oldBits = LLVM::BitcastOp::create(b, loc, type, old);
  b.setInsertionPoint(branch);
  LLVM::BrOp::create(b, branch.getLoc(), ValueRange(), exit);
  branch.erase();
  assumed.replaceAllUsesWith(oldBits);
  extract.getResult().replaceAllUsesWith(oldBits);
  // The exchange and what only it used are dead now: erase bottom-up (the
  // reinterpretations and the float op stay where the exit reads them).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*loop)))
    if (op.use_empty() && !op.hasTrait<OpTrait::IsTerminator>() &&
        (&op == exchange.getOperation() || isMemoryEffectFree(&op) ||
         knownCalls.contains(&op)))
      op.erase();
  // The entry edge no longer passes the first guess (usually a load of the
  // same address, dead now).
  for (Block *pred : llvm::to_vector(loop->getPredecessors())) {
    auto into = dyn_cast<LLVM::BrOp>(pred->getTerminator());
    if (!into)
      continue;
    Value guess = into.getDestOperands()[0];
    into->eraseOperand(0);
    if (Operation *def = guess.getDefiningOp();
        def && def->use_empty() && isa<LLVM::LoadOp>(def))
      def->erase();
  }
  loop->eraseArgument(0);
  return true;
}

} // namespace

void nabla::raise::rewriteCompareExchangeLoops(ModuleOp module) {
  module.walk([&](LLVM::LLVMFuncOp function) {
    SmallVector<Block *> loops;
    function.walk([&](LLVM::AtomicCmpXchgOp exchange) {
      Block *block = exchange->getBlock();
      if (block->getNumArguments() == 1 &&
          llvm::is_contained(block->getPredecessors(), block) &&
          !llvm::is_contained(loops, block))
        loops.push_back(block);
    });
    for (Block *loop : loops) {
      // The loop's entry edges must be plain branches passing the guess.
      if (llvm::any_of(loop->getPredecessors(), [&](Block *pred) {
            return pred != loop &&
                   !isa<LLVM::BrOp>(pred->getTerminator());
          }))
        continue;
      (void)rewriteLoop(loop);
    }
  });
}
