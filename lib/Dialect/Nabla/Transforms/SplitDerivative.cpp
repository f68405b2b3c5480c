//===- SplitDerivative.cpp - Split mode: augmented forward and reverse ----===//
//
// See SplitDerivative.h. The values crossing the cut are the results of
// top-level ops of the forward sweep that ops after it use. Each is, in
// order of preference: a tape op (recreated in the reverse: same op, same
// place in the order), a pure computation of the function's arguments
// (recomputed in the reverse), or a scalar stored into a slot of its own at
// the end of the augmented forward and loaded at the start of the reverse.
// A private buffer the forward sweep only zeroes (a shadow) is made again,
// zeroed, in the reverse.
//
//===----------------------------------------------------------------------===//

#include "SplitDerivative.h"

#include "Reverse/ReverseEmitter.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace nabla;

namespace {

/// The entry block's ops up to and including `forwardEnd`.
SmallVector<Operation *> forwardOps(Block &entry, Operation *forwardEnd) {
  SmallVector<Operation *> ops;
  if (!forwardEnd)
    return ops;
  for (Operation &op : entry) {
    ops.push_back(&op);
    if (&op == forwardEnd)
      break;
  }
  return ops;
}

/// The op of `block` at `index`.
Operation *opAt(Block &block, size_t index) {
  auto it = block.begin();
  std::advance(it, index);
  return &*it;
}

/// True if `value` can be computed again from the function's arguments:
/// an argument, or a pure op without regions of such values.
bool isRecomputable(Value value, Block &entry,
                    DenseMap<Value, bool> &known) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &entry;
  auto it = known.find(value);
  if (it != known.end())
    return it->second;
  Operation *op = value.getDefiningOp();
  bool result = op->getBlock() == &entry && op->getNumRegions() == 0 &&
                isMemoryEffectFree(op);
  if (result)
    for (Value operand : op->getOperands())
      if (!isRecomputable(operand, entry, known)) {
        result = false;
        break;
      }
  known[value] = result;
  return result;
}

/// True if `buffer` is a statically shaped private buffer that the forward
/// sweep (`forward`'s ops) only fills with zeros (a shadow: the reverse
/// accumulates into it), so the reverse can make it again, zeroed.
bool isZeroedBuffer(Value buffer, const DenseSet<Operation *> &forward,
                    Block &entry) {
  auto alloca = buffer.getDefiningOp<memref::AllocaOp>();
  if (!alloca || !alloca.getType().hasStaticShape())
    return false;
  for (OpOperand &use : buffer.getUses()) {
    Operation *top = entry.findAncestorOpInBlock(*use.getOwner());
    if (!top || !forward.contains(top))
      continue;
    if (isa<memref::DimOp>(use.getOwner()))
      continue;
    auto store = dyn_cast<memref::StoreOp>(use.getOwner());
    if (!store || store.getMemRef() != buffer ||
        !(matchPattern(store.getValue(), m_AnyZeroFloat()) ||
          matchPattern(store.getValue(), m_Zero())))
      return false;
  }
  return true;
}

/// Stores zero into every element of the static `buffer`.
void zeroFill(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(type.getElementType())));
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> indices;
  OpBuilder::InsertionGuard guard(b);
  for (int64_t extent : type.getShape()) {
    Value ub = arith::ConstantIndexOp::create(b, loc, extent);
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    b.setInsertionPointToStart(loop.getBody());
    indices.push_back(loop.getInductionVar());
  }
  memref::StoreOp::create(b, loc, zero, buffer, indices);
}

/// Whether a slot holds values of `type`.
bool isSlotType(Type type) {
  return (type.isIntOrIndexOrFloat() && !isa<ComplexType>(type) &&
          (type.isIndex() || type.getIntOrFloatBitWidth() <= 64));
}

Value createSlot(OpBuilder &b, Location loc, Type type) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value slot = createGlobalSlots(b, loc, type, one);
  slot.getDefiningOp()->setAttr(kSplitTapeAttrName, b.getUnitAttr());
  return slot;
}

void markTapes(func::FuncOp function) {
  function.walk([](TapeOp tape) {
    tape->setAttr(kSplitTapeAttrName, UnitAttr::get(tape.getContext()));
  });
}

} // namespace

LogicalResult nabla::splitDerivative(func::FuncOp combined,
                                     Operation *forwardEnd,
                                     SymbolTable &symbols,
                                     StringRef augmentedName,
                                     StringRef reverseName) {
  if (!combined.getBody().hasOneBlock())
    return combined.emitOpError("cannot be split: its body is not one block");
  if (combined.getNumResults())
    return combined.emitOpError(
        "cannot be split: split mode differentiates functions returning "
        "nothing (a kernel's body)");
  Block &entry = combined.getBody().front();
  SmallVector<Operation *> forward = forwardOps(entry, forwardEnd);
  DenseSet<Operation *> inForward(forward.begin(), forward.end());

  // The values crossing the cut, in the order of their definitions.
  llvm::SetVector<Value> crossing;
  for (Operation &op : entry) {
    if (inForward.contains(&op))
      continue;
    op.walk([&](Operation *user) {
      for (Value v : user->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def)
          continue;
        Operation *top = entry.findAncestorOpInBlock(*def);
        if (top && inForward.contains(top))
          crossing.insert(v);
      }
    });
  }
  SmallVector<Value> crossingSorted(crossing.begin(), crossing.end());
  llvm::stable_sort(crossingSorted, [&](Value a, Value b) {
    return a.getDefiningOp()->isBeforeInBlock(b.getDefiningOp());
  });
  DenseMap<Value, bool> recomputable;
  SmallVector<Value> taped, zeroed;
  for (Value v : crossingSorted) {
    if (v.getDefiningOp<TapeOp>() || isRecomputable(v, entry, recomputable))
      continue;
    if (isZeroedBuffer(v, inForward, entry)) {
      zeroed.push_back(v);
      continue;
    }
    if (!isSlotType(v.getType())) {
      InFlightDiagnostic diag = v.getDefiningOp()->emitOpError(
          "defines a value that split mode cannot keep between the augmented "
          "forward and the reverse: ");
      diag << v.getType()
           << " (a private buffer or a vector has no place in the tape)";
      return failure();
    }
    taped.push_back(v);
  }
  size_t cut = forward.size();

  // The augmented forward: the forward sweep, then the crossing scalars
  // into slots of their own.
  OpBuilder builder(combined);
  IRMapping toAugmented;
  auto augmented = cast<func::FuncOp>(builder.clone(*combined, toAugmented));
  augmented.setName(augmentedName);
  {
    Block &block = augmented.getBody().front();
    SmallVector<Operation *> after;
    for (auto it = std::next(block.begin(), cut); it != block.end(); ++it)
      after.push_back(&*it);
    for (Operation *op : llvm::reverse(after)) {
      op->dropAllUses();
      op->erase();
    }
    OpBuilder b = OpBuilder::atBlockEnd(&block);
    Location loc = combined.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    for (Value v : taped) {
      Value slot = createSlot(b, loc, v.getType());
      storePrivateSlot(b, loc, toAugmented.lookup(v), slot, zero);
    }
    func::ReturnOp::create(b, loc);
    markTapes(augmented);
  }
  symbols.insert(augmented);

  // The reverse: the tape ops and what their counts need, the crossing
  // scalars loaded, then the reverse sweep.
  IRMapping toReverse;
  auto reverse = cast<func::FuncOp>(builder.clone(*combined, toReverse));
  reverse.setName(reverseName);
  {
    Block &block = reverse.getBody().front();
    SmallVector<Operation *> removed;
    DenseMap<Value, bool> keptValues;
    DenseSet<Operation *> remade;
    for (Value v : zeroed)
      remade.insert(toReverse.lookup(v).getDefiningOp());
    for (size_t k = 0; k < cut; ++k) {
      Operation *op = opAt(block, k);
      bool keep = isa<TapeOp>(op) || remade.contains(op);
      if (!keep && op->getNumResults() == 1)
        keep = isRecomputable(op->getResult(0), block, keptValues);
      if (!keep)
        removed.push_back(op);
    }
    Operation *firstReverse = cut < block.getOperations().size()
                                  ? opAt(block, cut)
                                  : nullptr;
    OpBuilder b(reverse.getContext());
    if (firstReverse)
      b.setInsertionPoint(firstReverse);
    else
      b.setInsertionPointToEnd(&block);
    Location loc = combined.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    for (Value v : taped) {
      Value slot = createSlot(b, loc, v.getType());
      Value loaded = loadPrivateSlot(b, loc, slot, zero, v.getType());
      toReverse.lookup(v).replaceAllUsesWith(loaded);
    }
    // Shadows the forward sweep only zeroed: zeroed again here, the
    // forward's zeroing being removed with the forward sweep.
    for (Value v : zeroed)
      zeroFill(b, loc, toReverse.lookup(v));
    for (Operation *op : llvm::reverse(removed)) {
      op->dropAllUses();
      op->erase();
    }
    markTapes(reverse);
  }
  symbols.insert(reverse);
  return success();
}

FailureOr<int64_t> nabla::callerTapeWords(func::FuncOp half,
                                          Operation *request) {
  int64_t words = 0;
  WalkResult result = half.walk([&](TapeOp tape) {
    std::optional<int64_t> count = getConstantIntValue(tape.getCount());
    if (!count) {
      InFlightDiagnostic diag = request->emitOpError(
          "needs a caller-allocated tape of a size known at compile time "
          "(Enzyme's __enzyme_augmentsize), but a loop's trip count is known "
          "only at run time");
      diag.attachNote(tape.getLoc())
          << "its slots; the kernel-level split form (nabla.kernel_adjoint "
             "... reverse ...) sizes such a tape at launch, or give the loop "
             "nabla.max_trip_count = N";
      return WalkResult::interrupt();
    }
    int64_t width = cast<MemRefType>(tape.getType()).getRank() == 2 ? 2 : 1;
    words += *count * width;
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return words;
}

FailureOr<func::FuncOp> nabla::lowerToCallerTape(func::FuncOp source,
                                                 SymbolTable &symbols,
                                                 StringRef name,
                                                 Type tapeType,
                                                 Operation *request) {
  if (failed(callerTapeWords(source, request)))
    return failure();
  OpBuilder builder(source);
  auto lowered = cast<func::FuncOp>(builder.clone(*source));
  lowered.setName(name);
  Location loc = source.getLoc();
  unsigned count = lowered.getNumArguments();
  Type index = builder.getIndexType();
  if (failed(lowered.insertArgument(count, tapeType, {}, loc)) ||
      failed(lowered.insertArgument(count + 1, index, {}, loc)))
    return request->emitOpError("cannot add the tape parameters");
  Value tape = lowered.getArgument(count);
  Value offset = lowered.getArgument(count + 1);
  Type element = cast<MemRefType>(tapeType).getElementType();
  bool bytes = element.isInteger(8);
  Type i32 = builder.getI32Type();

  SmallVector<TapeOp> tapes;
  lowered.walk([&](TapeOp op) { tapes.push_back(op); });
  int64_t base = 0;
  for (TapeOp op : tapes) {
    bool pairs = cast<MemRefType>(op.getType()).getRank() == 2;
    for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
      auto load = dyn_cast<memref::LoadOp>(user);
      auto store = dyn_cast<memref::StoreOp>(user);
      if (!load && !store)
        return user->emitOpError(
            "uses a tape's slots; only memref.load and memref.store may");
      OpBuilder b(user);
      Location l = user->getLoc();
      Value word = arith::AddIOp::create(
          b, l, op.emitWord(b, l, load ? load.getIndices() : store.getIndices()),
          arith::ConstantIndexOp::create(b, l, base));
      if (!bytes) {
        Value at = arith::AddIOp::create(b, l, offset, word);
        if (store) {
          Value v = store.getValue();
          if (element != i32)
            v = arith::BitcastOp::create(b, l, element, v);
          memref::StoreOp::create(b, l, v, tape, at);
        } else {
          Value v = memref::LoadOp::create(b, l, tape, at);
          if (element != i32)
            v = arith::BitcastOp::create(b, l, i32, v);
          load.replaceAllUsesWith(v);
        }
        user->erase();
        continue;
      }
      // Bytes, little-endian.
      Value first = arith::AddIOp::create(
          b, l, offset,
          arith::MulIOp::create(b, l, word,
                                arith::ConstantIndexOp::create(b, l, 4)));
      Value result = store ? Value() : arith::ConstantIntOp::create(b, l, i32, 0);
      for (int k = 0; k < 4; ++k) {
        Value at = arith::AddIOp::create(
            b, l, first, arith::ConstantIndexOp::create(b, l, k));
        Value shift = arith::ConstantIntOp::create(b, l, i32, 8 * k);
        if (store) {
          Value part = arith::TruncIOp::create(
              b, l, element,
              arith::ShRUIOp::create(b, l, store.getValue(), shift));
          memref::StoreOp::create(b, l, part, tape, at);
        } else {
          Value part = arith::ExtUIOp::create(
              b, l, i32, memref::LoadOp::create(b, l, tape, at));
          result = arith::OrIOp::create(
              b, l, result, arith::ShLIOp::create(b, l, part, shift));
        }
      }
      if (load)
        load.replaceAllUsesWith(result);
      user->erase();
    }
    base += *getConstantIntValue(op.getCount()) * (pairs ? 2 : 1);
    op.erase();
  }
  symbols.insert(lowered);
  return lowered;
}
