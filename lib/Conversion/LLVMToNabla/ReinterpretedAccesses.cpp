//===- ReinterpretedAccesses.cpp - Loads and stores of a float's bits ------===//
//
// A load of an integer whose every use reinterprets it as a float of the
// same width loads the float; a store of a float's bits stores the float.
// That is how floats reach memory in three common shapes:
// - CUDA's cuda_fp16/cuda_bf16 keep a half as its bits (`__half` and
//   `__nv_bfloat16` are structs of an `unsigned short`): a buffer of them is
//   read and written as i16 and converted in inline assembly, which the
//   raise turns into fpext/fptrunc with bitcasts (InlineAsm.cpp);
// - packed halves: LLM training code moves eight bf16 at a time as an
//   `int4` (`Packed128`), so a buffer of halves is also read and written as
//   i32 words that are split into, or joined from, 16-bit fields. An object
//   that holds halves has its integer accesses turned into accesses of the
//   halves (joined or split with shifts); a packed load whose fields are
//   only used as halves, and a packed store of joined halves, become
//   accesses of the halves; joins and splits that meet fold away (also
//   across a phi of joins). A local
//   copy of packed halves thus becomes halves on both sides, in a few
//   rounds;
// - an integer-coerced struct (AMDGPU passes `complex` as `[2 x i32]`),
//   once its call is inlined.
// With the accesses retyped, such an object is viewed as the float type it
// holds (`memref<?xbf16>`, `memref<?xf16>`), so the AD differentiates
// through it; an object still accessed as integers elsewhere keeps the
// integer view (PunnedAccess.cpp), and the AD refuses to rebuild a float
// from its bits (FloatBits.cpp).
//
//===----------------------------------------------------------------------===//

#include "HalfFields.h"
#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

using namespace mlir;
using namespace nabla::raise;

namespace {

template <typename AccessOp>
bool isPlain(AccessOp op) {
  return !op.getVolatile_() &&
         op.getOrdering() == LLVM::AtomicOrdering::not_atomic;
}

/// The loads and stores of `func`, in order (the rewrites below replace
/// them while walking the list).
SmallVector<Operation *> collectAccesses(LLVM::LLVMFuncOp func) {
  SmallVector<Operation *> accesses;
  func.walk([&](Operation *op) {
    if (isa<LLVM::LoadOp, LLVM::StoreOp>(op))
      accesses.push_back(op);
  });
  return accesses;
}

/// Loads whose every use reinterprets them as one float type load it;
/// stores of a float's bits store the float.
bool retypeAccesses(LLVM::LLVMFuncOp func) {
  bool changed = false;
  for (Operation *op : collectAccesses(func)) {
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      if (!isa<IntegerType>(load.getType()) || !isPlain(load) ||
          load.use_empty())
        continue;
      Type floatType;
      bool reinterpreted = true;
      for (Operation *user : load->getUsers()) {
        auto cast = dyn_cast<LLVM::BitcastOp>(user);
        reinterpreted &= cast && isa<FloatType>(cast.getType()) &&
                         (!floatType || floatType == cast.getType());
        if (cast)
          floatType = cast.getType();
      }
      if (!reinterpreted)
        continue;
      OpBuilder builder(load);
      auto retyped = LLVM::LoadOp::create(builder, load.getLoc(), floatType,
                                          load.getAddr(),
                                          load.getAlignment().value_or(0));
      for (Operation *user : llvm::to_vector(load->getUsers())) {
        user->getResult(0).replaceAllUsesWith(retyped.getResult());
        user->erase();
      }
      load.erase();
      changed = true;
      continue;
    }
    if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
      auto cast = store.getValue().getDefiningOp<LLVM::BitcastOp>();
      if (!cast || !isa<IntegerType>(cast.getType()) ||
          !isa<FloatType>(cast.getArg().getType()) || !isPlain(store))
        continue;
      store.getValueMutable().assign(cast.getArg());
      if (cast->use_empty())
        cast->erase();
      changed = true;
    }
  }
  return changed;
}


/// A phi of integers whose every use reinterprets it as one float type
/// carries that float: the phi takes the float, its incoming values
/// reinterpreted on their edges (so a load feeding it reads the float).
bool retypePhis(LLVM::LLVMFuncOp func) {
  bool changed = false;
  for (Block &block : func.getBody()) {
    if (block.isEntryBlock())
      continue;
    for (BlockArgument arg : block.getArguments()) {
      if (!isa<IntegerType>(arg.getType()) || arg.use_empty())
        continue;
      Type floatType;
      bool reinterpreted = true;
      for (Operation *user : arg.getUsers()) {
        auto cast = dyn_cast<LLVM::BitcastOp>(user);
        reinterpreted &= cast && isa<FloatType>(cast.getType()) &&
                         (!floatType || floatType == cast.getType());
        if (cast)
          floatType = cast.getType();
      }
      for (auto it = block.pred_begin(), e = block.pred_end(); it != e; ++it)
        reinterpreted &= isa<BranchOpInterface>((*it)->getTerminator());
      if (!reinterpreted)
        continue;
      for (auto it = block.pred_begin(), e = block.pred_end(); it != e; ++it) {
        auto branch = cast<BranchOpInterface>((*it)->getTerminator());
        SuccessorOperands operands =
            branch.getSuccessorOperands(it.getSuccessorIndex());
        OpBuilder b(branch);
        Value in = operands[arg.getArgNumber()];
        operands.slice(arg.getArgNumber(), 1)
            .assign(LLVM::BitcastOp::create(b, branch->getLoc(), floatType, in)
                        .getResult());
      }
      arg.setType(floatType);
      for (Operation *user : llvm::to_vector(arg.getUsers())) {
        user->getResult(0).replaceAllUsesWith(arg);
        user->erase();
      }
      changed = true;
    }
  }
  return changed;
}

bool isHalf(Type type) { return isa<Float16Type, BFloat16Type>(type); }

/// The address of the `k`th 16-bit field at `address`.
Value fieldAddress(OpBuilder &b, Location loc, Value address, unsigned k) {
  if (k == 0)
    return address;
  return LLVM::GEPOp::create(b, loc, address.getType(), b.getI8Type(),
                             address, ArrayRef<LLVM::GEPArg>{int32_t(2 * k)});
}

/// The half type of each object accessed as one (null for one accessed as
/// both f16 and bf16).
DenseMap<Value, Type> halfObjects(LLVM::LLVMFuncOp func) {
  DenseMap<Value, Type> halves;
  auto note = [&](Value address, Type type) {
    if (!isHalf(type))
      return;
    auto [it, inserted] = halves.try_emplace(getBaseObject(address), type);
    if (!inserted && it->second != type)
      it->second = Type();
  };
  func.walk([&](Operation *op) {
    if (auto load = dyn_cast<LLVM::LoadOp>(op))
      note(load.getAddr(), load.getType());
    else if (auto store = dyn_cast<LLVM::StoreOp>(op))
      note(store.getAddr(), store.getValue().getType());
  });
  return halves;
}

/// Integer accesses (i16, i32, i64) of an object that holds halves become
/// accesses of the halves, the integers joined or split with shifts.
bool accessHalves(LLVM::LLVMFuncOp func) {
  DenseMap<Value, Type> halves = halfObjects(func);
  if (halves.empty())
    return false;
  SmallVector<Operation *> accesses;
  func.walk([&](Operation *op) {
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      if (isPlain(load) && isa<IntegerType>(load.getType()) &&
          load.getType().getIntOrFloatBitWidth() % 16 == 0 &&
          load.getType().getIntOrFloatBitWidth() <= 64 &&
          halves.lookup(getBaseObject(load.getAddr())))
        accesses.push_back(op);
    } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
      Type type = store.getValue().getType();
      if (isPlain(store) && isa<IntegerType>(type) &&
          type.getIntOrFloatBitWidth() % 16 == 0 &&
          type.getIntOrFloatBitWidth() <= 64 &&
          halves.lookup(getBaseObject(store.getAddr())))
        accesses.push_back(op);
    }
  });
  for (Operation *op : accesses) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      Type half = halves.lookup(getBaseObject(load.getAddr()));
      unsigned n = load.getType().getIntOrFloatBitWidth() / 16;
      SmallVector<Value> fields;
      for (unsigned k = 0; k < n; ++k) {
        Value h = LLVM::LoadOp::create(
            b, loc, half, fieldAddress(b, loc, load.getAddr(), k), 2);
        fields.push_back(LLVM::BitcastOp::create(b, loc, b.getI16Type(), h));
      }
      Value result = n == 1 ? fields[0]
                            : joinHalves(b, loc,
                                         cast<IntegerType>(load.getType()),
                                         fields);
      load.getResult().replaceAllUsesWith(result);
      load.erase();
      continue;
    }
    auto store = cast<LLVM::StoreOp>(op);
    Type half = halves.lookup(getBaseObject(store.getAddr()));
    Value value = store.getValue();
    unsigned n = value.getType().getIntOrFloatBitWidth() / 16;
    for (unsigned k = 0; k < n; ++k) {
      Value field = n == 1 ? value : extractHalf(b, loc, value, k);
      LLVM::StoreOp::create(b, loc, LLVM::BitcastOp::create(b, loc, half, field),
                            fieldAddress(b, loc, store.getAddr(), k), 2);
    }
    store.erase();
  }
  return !accesses.empty();
}

/// A packed load (i32, i64) whose every use takes a 16-bit field that is
/// then only reinterpreted as one half type loads the halves; a packed
/// store of a join of halves' bits stores the halves.
bool splitPackedAccesses(LLVM::LLVMFuncOp func) {
  bool changed = false;
  for (Operation *op : collectAccesses(func)) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      if (!isPlain(load) || !packedHalvesType(load.getType()) || load.use_empty())
        continue;
      // Every use: trunc, or lshr by 16 k whose uses are truncs; every
      // trunc's uses bitcasts to one half type.
      SmallVector<std::pair<LLVM::TruncOp, unsigned>> truncs;
      Type half;
      auto takeTrunc = [&](Operation *user) {
        auto trunc = dyn_cast<LLVM::TruncOp>(user);
        std::optional<std::pair<Value, unsigned>> field =
            trunc ? extractedHalf(trunc) : std::nullopt;
        if (!field || field->first != load.getResult())
          return false;
        for (Operation *castUser : trunc->getUsers()) {
          auto cast = dyn_cast<LLVM::BitcastOp>(castUser);
          if (!cast || !isHalf(cast.getType()) ||
              (half && half != cast.getType()))
            return false;
          half = cast.getType();
        }
        truncs.push_back({trunc, field->second});
        return true;
      };
      bool fields = llvm::all_of(load->getUsers(), [&](Operation *user) {
        if (auto shift = dyn_cast<LLVM::LShrOp>(user))
          return shift.getLhs() == load.getResult() &&
                 llvm::all_of(shift->getUsers(), takeTrunc);
        return takeTrunc(user);
      });
      if (!fields || !half)
        continue;
      SmallVector<Value> loaded(load.getType().getIntOrFloatBitWidth() / 16);
      for (auto [trunc, k] : truncs) {
        if (!loaded[k])
          loaded[k] = LLVM::LoadOp::create(
              b, loc, half, fieldAddress(b, loc, load.getAddr(), k), 2);
        for (Operation *cast : llvm::to_vector(trunc->getUsers())) {
          cast->getResult(0).replaceAllUsesWith(loaded[k]);
          cast->erase();
        }
      }
      changed = true;
      continue;
    }
    auto store = cast<LLVM::StoreOp>(op);
    SmallVector<Value> fields;
    if (!isPlain(store) || failed(matchJoinedHalves(store.getValue(), fields)))
      continue;
    SmallVector<Value> halves;
    for (Value field : fields) {
      auto cast = field.getDefiningOp<LLVM::BitcastOp>();
      if (!cast || !isHalf(cast.getArg().getType()) ||
          (!halves.empty() && halves[0].getType() != cast.getArg().getType()))
        break;
      halves.push_back(cast.getArg());
    }
    if (halves.size() != fields.size())
      continue;
    for (auto [k, h] : llvm::enumerate(halves))
      LLVM::StoreOp::create(b, loc, h, fieldAddress(b, loc, store.getAddr(), k),
                            2);
    store.erase();
    changed = true;
  }
  return changed;
}

/// Field `k` of the phi `arg` when every value it receives is a join (a
/// half placed in either field of a pair by branches, llm.c's atomicAddX):
/// a new block argument receiving the joins' fields, or null.
Value fieldOfPhi(BlockArgument arg, unsigned k) {
  Block *block = arg.getOwner();
  if (block->isEntryBlock() || block->hasNoPredecessors())
    return {};
  SmallVector<std::pair<BranchOpInterface, unsigned>> edges;
  SmallVector<Value> incoming;
  for (auto it = block->pred_begin(), e = block->pred_end(); it != e; ++it) {
    auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
    if (!branch)
      return {};
    unsigned successor = it.getSuccessorIndex();
    SuccessorOperands operands = branch.getSuccessorOperands(successor);
    if (operands.getProducedOperandCount() ||
        arg.getArgNumber() >= operands.size())
      return {};
    SmallVector<Value> fields;
    if (failed(matchJoinedHalves(operands[arg.getArgNumber()], fields)))
      return {};
    edges.push_back({branch, successor});
    incoming.push_back(fields[k]);
  }
  BlockArgument field =
      block->addArgument(incoming.front().getType(), arg.getLoc());
  for (auto [edge, value] : llvm::zip(edges, incoming))
    edge.first.getSuccessorOperands(edge.second).append(value);
  return field;
}

/// Removes the block arguments of `func` nothing reads any more, and the
/// values its predecessors pass them.
void eraseDeadPhis(LLVM::LLVMFuncOp func) {
  for (Block &block : func.getBody()) {
    if (block.isEntryBlock())
      continue;
    for (unsigned i = block.getNumArguments(); i-- > 0;) {
      if (!block.getArgument(i).use_empty())
        continue;
      bool removable = true;
      for (auto it = block.pred_begin(), e = block.pred_end(); it != e; ++it)
        removable &= isa<BranchOpInterface>((*it)->getTerminator());
      if (!removable)
        continue;
      for (auto it = block.pred_begin(), e = block.pred_end(); it != e; ++it)
        cast<BranchOpInterface>((*it)->getTerminator())
            .getSuccessorOperands(it.getSuccessorIndex())
            .erase(i);
      block.eraseArgument(i);
    }
  }
}

/// trunc(join) and trunc(lshr(join, 16 k)) → the field (also of a phi of
/// joins); bitcasts that undo each other → the value; then what became
/// dead. True if a field was folded.
bool foldFields(LLVM::LLVMFuncOp func) {
  bool changed = false;
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<LLVM::TruncOp, LLVM::BitcastOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (auto trunc = dyn_cast<LLVM::TruncOp>(op)) {
      std::optional<std::pair<Value, unsigned>> field = extractedHalf(trunc);
      SmallVector<Value> fields;
      if (field && succeeded(matchJoinedHalves(field->first, fields))) {
        trunc.getResult().replaceAllUsesWith(fields[field->second]);
        changed = true;
      } else if (auto arg = field ? dyn_cast<BlockArgument>(field->first)
                                  : BlockArgument()) {
        if (Value phi = fieldOfPhi(arg, field->second)) {
          trunc.getResult().replaceAllUsesWith(phi);
          changed = true;
        }
      }
      continue;
    }
    auto bitcast = cast<LLVM::BitcastOp>(op);
    if (auto inner = bitcast.getArg().getDefiningOp<LLVM::BitcastOp>();
        inner && inner.getArg().getType() == bitcast.getType())
      bitcast.getResult().replaceAllUsesWith(inner.getArg());
  }
  bool erased = true;
  while (erased) {
    erased = false;
    func.walk([&](Operation *op) {
      if (op->getNumResults() == 1 && op->use_empty() &&
          isa<LLVM::TruncOp, LLVM::BitcastOp, LLVM::ZExtOp, LLVM::ShlOp,
              LLVM::LShrOp, LLVM::OrOp, LLVM::ConstantOp, LLVM::GEPOp>(op)) {
        op->erase();
        erased = true;
      }
    });
    if (!erased) {
      // Phis of joins whose fields were taken: the joins die with them.
      unsigned before = 0, after = 0;
      for (Block &block : func.getBody())
        before += block.getNumArguments();
      eraseDeadPhis(func);
      for (Block &block : func.getBody())
        after += block.getNumArguments();
      erased = after != before;
    }
  }
  return changed;
}

} // namespace

void nabla::raise::retypeReinterpretedAccesses(LLVM::LLVMFuncOp func) {
  // Each step can enable another (a local copy of packed halves: the
  // copy's loads become halves, then the words it was filled from); a
  // few rounds reach the fixed point.
  for (int round = 0; round < 8; ++round) {
    bool changed = retypeAccesses(func);
    changed |= retypePhis(func);
    changed |= accessHalves(func);
    changed |= splitPackedAccesses(func);
    changed |= foldFields(func);
    changed |= retypeAccesses(func);
    if (!changed)
      break;
  }
}
