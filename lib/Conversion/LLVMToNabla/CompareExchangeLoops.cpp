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
// differentiates it as the atomic it is. A 32-bit word holding two halves
// (cuda_bf16's atomicAdd on `__nv_bfloat162`, llm.c's CAS loops on bf16
// pairs) whose halves each get such an op becomes two atomics, one per
// half. The loop written `while (old != assumed)`, its first attempt before
// it, becomes the same atomic. Other compare-exchange uses are left to the
// raise, which refuses them with a located error.
//
//===----------------------------------------------------------------------===//

#include "HalfFields.h"
#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSwitch.h"

#include <functional>

using namespace mlir;
using namespace nabla::raise;

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
  // (Without a loop, for a packed half: any other operand, checked later.)
  auto outside = [&](Value v) { return !loop || v.getParentBlock() != loop; };
  if (lhs == current && outside(rhs))
    operand = rhs;
  else if (commutative && rhs == current && outside(lhs))
    operand = lhs;
  else
    return std::nullopt;
  return kind;
}

/// A half's value as f32, `fpext(bitcast half (bits))`: the bits, or null.
Value getWidenedHalfBits(Value value) {
  auto ext = value.getDefiningOp<LLVM::FPExtOp>();
  if (!ext || !value.getType().isF32())
    return {};
  auto bits = ext.getArg().getDefiningOp<LLVM::BitcastOp>();
  if (!bits || !isa<Float16Type, BFloat16Type>(bits.getType()))
    return {};
  return bits.getArg();
}

/// One half of a packed update: `combined` (the new half's bits) is
/// bitcast(fptrunc(op(fpext(current lane), fpext(operand)))) with the
/// current lane taken from `assumed`. Sets `operand` (the other input, as
/// the half) and `half` (its type).
std::optional<LLVM::AtomicBinOp> matchHalfLane(Value combined, Value assumed,
                                               unsigned lane, Block *loop,
                                               Value &operand, Type &half) {
  auto bits = combined.getDefiningOp<LLVM::BitcastOp>();
  auto trunc = bits ? bits.getArg().getDefiningOp<LLVM::FPTruncOp>()
                    : LLVM::FPTruncOp();
  if (!trunc || !trunc.getArg().getType().isF32())
    return std::nullopt;
  Operation *def = trunc.getArg().getDefiningOp();
  if (!def || def->getNumOperands() != 2)
    return std::nullopt;
  Value current;
  for (Value input : def->getOperands())
    if (Value laneBits = getWidenedHalfBits(input);
        laneBits && extractedHalf(laneBits) == std::pair(assumed, lane))
      current = input;
  if (!current)
    return std::nullopt;
  Value other;
  std::optional<LLVM::AtomicBinOp> kind =
      matchCombination(trunc.getArg(), current, /*loop=*/nullptr, other);
  if (!kind)
    return std::nullopt;
  auto ext = other.getDefiningOp<LLVM::FPExtOp>();
  if (!ext || ext.getArg().getType() != trunc.getType())
    return std::nullopt;
  operand = ext.getArg();
  half = trunc.getType();
  return kind;
}

/// `value` computed before `b`'s insertion point: itself when defined
/// outside `loop`, else a copy of its side-effect-free computation from
/// values defined outside; null when it depends on the loop.
Value cloneOutside(OpBuilder &b, Value value, Block *loop) {
  if (value.getParentBlock() != loop)
    return value;
  Operation *def = value.getDefiningOp();
  if (!def || def->getNumResults() != 1 || !isMemoryEffectFree(def) ||
      def->getNumRegions())
    return {};
  IRMapping mapping;
  for (Value input : def->getOperands()) {
    Value outside = cloneOutside(b, input, loop);
    if (!outside)
      return {};
    mapping.map(input, outside);
  }
  return b.clone(*def, mapping)->getResult(0);
}

/// One atomic of an update: its kind, operand and type (the value's float
/// type, or a half's for each half of a word).
struct Lane {
  LLVM::AtomicBinOp kind;
  Value operand;
  Type type;
};

/// The atomic update the exchanged value `newBits` makes of `assumed`
/// (of integer `type`): the float op on its bits, or one on each half of a
/// word of two halves; std::nullopt for anything else. Operands must come
/// from outside `loop` (when given). `calls` receives the libdevice calls
/// the update is made of.
std::optional<SmallVector<Lane, 2>>
matchUpdate(Value newBits, Value assumed, IntegerType type, Block *loop,
            llvm::SmallPtrSetImpl<Operation *> &calls) {
  SmallVector<Lane, 2> lanes;
  if (Value combined = getReinterpreted(newBits, /*toFloat=*/false)) {
    if (!isa<FloatType>(combined.getType()) ||
        combined.getType().getIntOrFloatBitWidth() != type.getWidth())
      return std::nullopt;
    Value operand;
    Operation *combination = combined.getDefiningOp();
    Value current;
    for (Value input : combination ? combination->getOperands() : ValueRange())
      if (Value bits = getReinterpreted(input, /*toFloat=*/true);
          bits == assumed)
        current = input;
    if (!current)
      return std::nullopt;
    std::optional<LLVM::AtomicBinOp> kind =
        matchCombination(combined, current, loop, operand);
    if (!kind)
      return std::nullopt;
    lanes.push_back({*kind, operand, combined.getType()});
    calls.insert(combination);
    calls.insert(newBits.getDefiningOp());
    calls.insert(current.getDefiningOp());
    return lanes;
  }
  SmallVector<Value, 2> bitsOfLane;
  if (type.getWidth() != 32 || failed(matchJoinedHalves(newBits, bitsOfLane)))
    return std::nullopt;
  for (auto [lane, bits] : llvm::enumerate(bitsOfLane)) {
    Value operand;
    Type half;
    std::optional<LLVM::AtomicBinOp> kind =
        matchHalfLane(bits, assumed, lane, loop, operand, half);
    if (!kind)
      return std::nullopt;
    lanes.push_back({*kind, operand, half});
  }
  return lanes;
}

/// The atomics of `lanes` on `exchange`'s address, at `b`'s insertion
/// point; returns the old value's bits (of `type`).
Value createAtomics(OpBuilder &b, ArrayRef<Lane> lanes,
                    LLVM::AtomicCmpXchgOp exchange, IntegerType type) {
  Location loc = exchange.getLoc();
  StringRef scope = exchange.getSyncscope() ? *exchange.getSyncscope() : "";
  auto atomic = [&](const Lane &lane, Value pointer, unsigned alignment) {
    return LLVM::AtomicRMWOp::create(b, loc, lane.kind, pointer, lane.operand,
                                     exchange.getSuccessOrdering(), scope,
                                     alignment, exchange.getVolatile_());
  };
  if (lanes.size() == 1) {
    Value old = atomic(lanes[0], exchange.getPtr(),
                       exchange.getAlignment().value_or(0));
    return LLVM::BitcastOp::create(b, loc, type, old);
  }
  // Little-endian: the low half at the word's address, the high one two
  // bytes on.
  Type i16 = b.getI16Type(), i32 = b.getI32Type();
  Value high = LLVM::GEPOp::create(b, loc, exchange.getPtr().getType(),
                                   b.getI8Type(), exchange.getPtr(),
                                   ArrayRef<LLVM::GEPArg>{2});
  Value oldLow = LLVM::BitcastOp::create(
      b, loc, i16, atomic(lanes[0], exchange.getPtr(), 2));
  Value oldHigh =
      LLVM::BitcastOp::create(b, loc, i16, atomic(lanes[1], high, 2));
  return LLVM::OrOp::create(
      b, loc, LLVM::ZExtOp::create(b, loc, i32, oldLow),
      LLVM::ShlOp::create(
          b, loc, LLVM::ZExtOp::create(b, loc, i32, oldHigh),
          LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(16))));
}

/// A compare-exchange whose success leaves `block` for `success` (with
/// `exits`, its operands) and whose failure goes to `failure` (with
/// `passed`): the exit condition is the exchange's flag, or old == cmp;
/// false when `exchange` ends `block` otherwise.
bool matchAttempt(LLVM::AtomicCmpXchgOp exchange, Block *&success,
                  Block *&failure, Value &passed, ValueRange &exits,
                  LLVM::CondBrOp *test = nullptr) {
  // The branch on the outcome: in the exchange's block, or a later one
  // (two attempts interleaved, each tested after the other's loop).
  LLVM::CondBrOp branch;
  for (Operation *user : exchange->getUsers()) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!extract)
      continue;
    SmallVector<Value> conditions{extract.getResult()};
    for (Operation *use : extract->getUsers())
      if (isa<LLVM::ICmpOp>(use))
        conditions.push_back(use->getResult(0));
    for (Value condition : conditions)
      for (Operation *use : condition.getUsers())
        if (auto candidate = dyn_cast<LLVM::CondBrOp>(use);
            candidate && candidate.getCondition() == condition) {
          if (branch && branch != candidate)
            return false;
          branch = candidate;
        }
  }
  if (!branch)
    return false;
  if (test)
    *test = branch;
  Value condition = branch.getCondition();
  bool onTrue;
  if (auto flag = condition.getDefiningOp<LLVM::ExtractValueOp>();
      flag && flag.getContainer() == exchange.getResult() &&
      flag.getPosition() == ArrayRef<int64_t>{1}) {
    onTrue = true;
  } else if (auto compare = condition.getDefiningOp<LLVM::ICmpOp>();
             compare &&
             (compare.getPredicate() == LLVM::ICmpPredicate::eq ||
              compare.getPredicate() == LLVM::ICmpPredicate::ne)) {
    auto old = [&](Value v) {
      auto extract = v.getDefiningOp<LLVM::ExtractValueOp>();
      return extract && extract.getContainer() == exchange.getResult() &&
             extract.getPosition() == ArrayRef<int64_t>{0};
    };
    if (!((old(compare.getLhs()) && compare.getRhs() == exchange.getCmp()) ||
          (old(compare.getRhs()) && compare.getLhs() == exchange.getCmp())))
      return false;
    onTrue = compare.getPredicate() == LLVM::ICmpPredicate::eq;
  } else {
    return false;
  }
  success = onTrue ? branch.getTrueDest() : branch.getFalseDest();
  failure = onTrue ? branch.getFalseDest() : branch.getTrueDest();
  ValueRange toSuccess = onTrue ? branch.getTrueDestOperands()
                                : branch.getFalseDestOperands();
  ValueRange toFailure = onTrue ? branch.getFalseDestOperands()
                                : branch.getTrueDestOperands();
  if (toFailure.size() != 1)
    return false;
  passed = toFailure.front();
  exits = toSuccess;
  return true;
}

/// Rewrites the compare-exchange loop `loop` ends with, if it is one.
bool rewriteLoop(Block *loop) {
  if (loop->getNumArguments() != 1)
    return false;
  BlockArgument assumed = loop->getArgument(0);
  auto type = dyn_cast<IntegerType>(assumed.getType());
  if (!type || (type.getWidth() != 32 && type.getWidth() != 64))
    return false;
  // The loop's one exchange of the assumed value, exiting when it
  // succeeded and continuing with its old value while it failed.
  LLVM::AtomicCmpXchgOp exchange;
  for (auto candidate : loop->getOps<LLVM::AtomicCmpXchgOp>())
    if (candidate.getCmp() == assumed) {
      if (exchange)
        return false;
      exchange = candidate;
    }
  Block *exit, *retry;
  Value passed;
  ValueRange exits;
  LLVM::CondBrOp branch;
  if (!exchange ||
      !matchAttempt(exchange, exit, retry, passed, exits, &branch) ||
      branch->getBlock() != loop || retry != loop || exit == loop ||
      !exits.empty() || !exit->getArguments().empty())
    return false;
  auto extract = passed.getDefiningOp<LLVM::ExtractValueOp>();
  if (!extract || extract.getContainer() != exchange.getResult() ||
      extract.getPosition() != ArrayRef<int64_t>{0})
    return false;
  Value newBits = exchange.getVal();
  llvm::SmallPtrSet<Operation *, 4> knownCalls;
  std::optional<SmallVector<Lane, 2>> lanes =
      matchUpdate(newBits, assumed, type, loop, knownCalls);
  if (!lanes)
    return false;
  // Nothing else happens in the loop: no other call or memory access, and
  // the exchange's result feeds only the loop's own test and back edge.
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
  // A half's operand is computed in the loop from values outside it (the
  // lanes of a packed operand): computed before the atomics instead.
  OpBuilder b(loop, loop->begin());
  for (Lane &lane : *lanes)
    if (!(lane.operand = cloneOutside(b, lane.operand, loop)))
      return false;

  // The atomics at the top of the loop block, which now falls through to
  // the exit; the old value's bits replace `assumed` (on exit they were
  // equal).
  Value oldBits = createAtomics(b, *lanes, exchange, type);
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

/// `a` and `b` compute the same value: one value, or side-effect-free ops
/// of one kind on operands that compute the same (the lanes of a packed
/// operand, taken apart twice).
bool sameComputation(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || x->getName() != y->getName() ||
      x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumResults() != 1 || y->getNumResults() != 1 ||
      a.getType() != b.getType() || x->getNumRegions() ||
      !isMemoryEffectFree(x) || x->getNumOperands() != y->getNumOperands())
    return false;
  for (auto [u, v] : llvm::zip(x->getOperands(), y->getOperands()))
    if (!sameComputation(u, v))
      return false;
  return true;
}

/// The exchanged value a retry block receives as `passed` from
/// `exchange`: the whole result, or its old value.
bool passesOldValue(Value passed, LLVM::AtomicCmpXchgOp exchange) {
  if (passed == exchange.getResult())
    return true;
  auto extract = passed.getDefiningOp<LLVM::ExtractValueOp>();
  return extract && extract.getContainer() == exchange.getResult() &&
         extract.getPosition() == ArrayRef<int64_t>{0};
}

/// The other way to write the loop (`while (old != assumed)` with the
/// first attempt before it): an attempt `first` on a guess, then on
/// failure a one-block loop retrying with the old value it got, both
/// making the same update. The first attempt becomes the atomic; the loop
/// goes.
bool rewritePeeledLoop(LLVM::AtomicCmpXchgOp first) {
  Block *done, *retry;
  Value passed;
  ValueRange exits;
  LLVM::CondBrOp test;
  if (!matchAttempt(first, done, retry, passed, exits, &test) ||
      !passesOldValue(passed, first) ||
      retry == test->getBlock() || retry->getNumArguments() != 1 ||
      llvm::count_if(retry->getPredecessors(), [](Block *) { return true; }) !=
          2 ||
      !llvm::is_contained(retry->getPredecessors(), retry))
    return false;
  auto type = dyn_cast<IntegerType>(first.getCmp().getType());
  if (!type || (type.getWidth() != 32 && type.getWidth() != 64))
    return false;
  // The retry: the old value (the argument, or its first field) is the
  // assumed value of an exchange at the same address, going back with its
  // own old value until it succeeds.
  BlockArgument arg = retry->getArgument(0);
  Value assumed = arg;
  if (arg.getType() == first.getResult().getType()) {
    auto field = llvm::find_if(arg.getUsers(), [](Operation *user) {
      auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
      return extract && extract.getPosition() == ArrayRef<int64_t>{0};
    });
    if (field == arg.getUsers().end())
      return false;
    assumed = (*field)->getResult(0);
  }
  LLVM::AtomicCmpXchgOp again;
  for (auto exchange : retry->getOps<LLVM::AtomicCmpXchgOp>())
    again = again ? LLVM::AtomicCmpXchgOp() : exchange;
  Block *againDone, *againRetry;
  Value againPassed;
  ValueRange againExits;
  if (!again || again.getPtr() != first.getPtr() ||
      again.getCmp() != assumed ||
      !matchAttempt(again, againDone, againRetry, againPassed, againExits) ||
      againDone != done || againRetry != retry ||
      !passesOldValue(againPassed, again) ||
      againPassed.getType() != arg.getType())
    return false;
  // Both exits pass the same: the old value (which the exchange that
  // succeeded found), or the same computation.
  auto oldValueOf = [](Value v, LLVM::AtomicCmpXchgOp exchange) {
    return passesOldValue(v, exchange) && v != exchange.getResult();
  };
  for (auto [a, b] : llvm::zip(exits, againExits))
    if (!(oldValueOf(a, first) && oldValueOf(b, again)) &&
        (b.getParentBlock() == retry || !sameComputation(a, b)))
      return false;
  llvm::SmallPtrSet<Operation *, 4> calls, retryCalls;
  std::optional<SmallVector<Lane, 2>> lanes =
      matchUpdate(first.getVal(), first.getCmp(), type, nullptr, calls);
  std::optional<SmallVector<Lane, 2>> retried =
      matchUpdate(again.getVal(), assumed, type, retry, retryCalls);
  if (!lanes || !retried || lanes->size() != retried->size())
    return false;
  for (auto [a, b] : llvm::zip(*lanes, *retried))
    if (a.kind != b.kind || a.type != b.type ||
        !sameComputation(a.operand, b.operand))
      return false;
  // The update's operands are not made from the guess.
  std::function<bool(Value, unsigned)> fromGuess = [&](Value v,
                                                       unsigned depth) {
    if (v == first.getCmp())
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != first->getBlock())
      return false;
    return depth == 0 || llvm::any_of(def->getOperands(), [&](Value u) {
             return fromGuess(u, depth - 1);
           });
  };
  for (const Lane &lane : *lanes)
    if (fromGuess(lane.operand, 16))
      return false;
  // The retry does nothing else, and nothing outside reads its values.
  for (Operation &op : *retry) {
    if (isa<LLVM::CallOp>(op) ? !retryCalls.contains(&op)
                              : !isMemoryEffectFree(&op) && &op != again)
      return false;
    for (Operation *user : op.getUsers())
      if (user->getBlock() != retry)
        return false;
  }
  // The old value may be read after the attempt only on success (where
  // the guess was right): the atomic's old value then.
  OpBuilder b(first);
  Value oldBits = createAtomics(b, *lanes, first, type);
  b.setInsertionPoint(test);
  LLVM::BrOp::create(b, test.getLoc(), exits, done);
  Block *tested = test->getBlock();
  test.erase();
  retry->dropAllDefinedValueUses();
  retry->dropAllReferences();
  retry->erase();
  for (Operation *user : llvm::to_vector(first->getUsers())) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    if (extract && extract.getPosition() == ArrayRef<int64_t>{0})
      extract.getResult().replaceAllUsesWith(oldBits);
  }
  // The exchange, its test and what only they used (the guess's load
  // included) are dead now.
  Block *blocks[] = {tested, first->getBlock()};
  Operation *guess = first.getCmp().getDefiningOp<LLVM::LoadOp>();
  Operation *exchange = first;
  for (bool erased = true; erased;) {
    erased = false;
    for (Block *block : blocks)
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block)))
        if (op.use_empty() && !op.hasTrait<OpTrait::IsTerminator>() &&
            (&op == exchange || &op == guess || calls.contains(&op) ||
             isMemoryEffectFree(&op))) {
          op.erase();
          erased = true;
        }
  }
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
    // First attempts before a retry loop.
    SmallVector<LLVM::AtomicCmpXchgOp> attempts;
    function.walk([&](LLVM::AtomicCmpXchgOp exchange) {
      if (!llvm::is_contained(exchange->getBlock()->getPredecessors(),
                              exchange->getBlock()))
        attempts.push_back(exchange);
    });
    for (LLVM::AtomicCmpXchgOp attempt : attempts)
      (void)rewritePeeledLoop(attempt);
  });
}
