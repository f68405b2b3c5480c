//===- InlineAggregateCalls.cpp - Calls the raise cannot make -------------===//
//
// The raise gives a device function memrefs and scalars, one per parameter,
// and passes it global buffers. A struct passed by value (`byval`, or a
// first-class aggregate) or returned (directly, or through `sret` memory) has
// no such form, nor has a pointer into a local array or workgroup memory.
// CUDA code passes them all the time (a parameter set, a `complex` into
// `c_mul`, a struct result, a `__shared__` tile or a thread's local array
// handed to a helper). Such a call is inlined before the raise, with MLIR's
// inliner: a byval struct becomes the caller's memory (a copy, or the
// original where the callee only reads it), and the result's fields are read
// straight from the values the callee built. The kernels and the functions
// Enzyme requests differentiate stay functions.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "nabla/Transforms/InliningUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace nabla::raise;

namespace {

bool isAggregate(Type type) {
  return isa<LLVM::LLVMStructType, LLVM::LLVMArrayType>(type);
}

/// A defined device function the raise cannot call: a struct parameter or
/// result (returned directly, or through memory the caller passes: `sret`,
/// as AMDGPU returns larger structs).
bool takesOrReturnsStructs(LLVM::LLVMFuncOp func) {
  if (func.isExternal() || nabla::raise::isKernel(func))
    return false;
  if (isAggregate(func.getFunctionType().getReturnType()))
    return true;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (isAggregate(func.getArgumentTypes()[i]) ||
        func.getArgAttr(i, LLVM::LLVMDialect::getByValAttrName()) ||
        func.getArgAttr(i, LLVM::LLVMDialect::getByRefAttrName()) ||
        func.getArgAttr(i, LLVM::LLVMDialect::getStructRetAttrName()))
      return true;
  return false;
}

/// A struct a multi-block callee returns reaches the continuation as a
/// block argument (a phi of struct type): the argument becomes one argument
/// per field, the predecessors pass the fields (extractvalue, which folds
/// into the values the callee inserted), and the struct is rebuilt where the
/// argument was (insertvalue, which folds into the caller's extractvalues).
LogicalResult scalarizeAggregateBlockArguments(LLVM::LLVMFuncOp func) {
  SmallVector<BlockArgument> arguments;
  for (Block &block : llvm::drop_begin(func.getBody()))
    for (BlockArgument argument : block.getArguments())
      if (isAggregate(argument.getType()))
        arguments.push_back(argument);
  // Later arguments first, so the indices of earlier ones stay valid.
  for (BlockArgument argument : llvm::reverse(arguments)) {
    Block *block = argument.getOwner();
    unsigned index = argument.getArgNumber();
    AggregateFields leaves = getAggregateFields(argument.getType());
    for (auto it = block->pred_begin(); it != block->pred_end(); ++it) {
      auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
      if (!branch)
        return (*it)->getTerminator()->emitError(
            "cannot raise a branch that passes a struct");
      SuccessorOperands operands =
          branch.getSuccessorOperands(it.getSuccessorIndex());
      if (index < operands.getProducedOperandCount())
        return branch.emitError("cannot raise a branch that passes a struct");
      unsigned forwarded = index - operands.getProducedOperandCount();
      Value whole = operands[index];
      OpBuilder builder(branch);
      SmallVector<Value> fields;
      for (auto &[position, type] : leaves)
        fields.push_back(LLVM::ExtractValueOp::create(builder, branch.getLoc(),
                                                      whole, position));
      MutableOperandRange range = operands.getMutableForwardedOperands();
      auto passed = llvm::to_vector(OperandRange(range));
      passed.erase(passed.begin() + forwarded);
      passed.insert(passed.begin() + forwarded, fields.begin(), fields.end());
      range.assign(passed);
    }
    OpBuilder builder = OpBuilder::atBlockBegin(block);
    Value rebuilt =
        LLVM::PoisonOp::create(builder, argument.getLoc(), argument.getType());
    for (auto [i, leaf] : llvm::enumerate(leaves)) {
      BlockArgument field =
          block->insertArgument(index + 1 + i, leaf.second, argument.getLoc());
      rebuilt = LLVM::InsertValueOp::create(builder, argument.getLoc(), rebuilt,
                                            field, leaf.first);
    }
    argument.replaceAllUsesWith(rebuilt);
    block->eraseArgument(index);
  }
  return success();
}

/// Whether `pointer` (through address computations) points into a local
/// (`alloca`) or workgroup memory (an `addrspace(3)` global).
bool pointsIntoLocalMemory(Value pointer, ModuleOp module) {
  while (Operation *def = pointer.getDefiningOp()) {
    if (isa<LLVM::AllocaOp>(def))
      return true;
    if (auto address = dyn_cast<LLVM::AddressOfOp>(def)) {
      auto global = module.lookupSymbol<LLVM::GlobalOp>(address.getGlobalName());
      return global && global.getAddrSpace() == 3;
    }
    if (!isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def))
      return false;
    pointer = def->getOperand(0);
  }
  return false;
}

/// A call the raise cannot make, inlined: of a function that takes or
/// returns structs, or that is given a pointer into a local array or
/// workgroup memory (the raise passes device functions global buffers).
bool mustInline(LLVM::CallOp call, LLVM::LLVMFuncOp callee, ModuleOp module) {
  if (callee.isExternal() || nabla::raise::isKernel(callee))
    return false;
  if (takesOrReturnsStructs(callee))
    return true;
  for (Type type : callee.getArgumentTypes())
    if (auto pointer = dyn_cast<LLVM::LLVMPointerType>(type);
        pointer && (pointer.getAddressSpace() == 3 ||
                    pointer.getAddressSpace() == 5))
      return true;
  return llvm::any_of(call.getArgOperands(), [&](Value operand) {
    return pointsIntoLocalMemory(operand, module);
  });
}

/// The constant byte offset `pointer` is at from `base`, through
/// constant-index GEPs (of i8 or any type, into struct fields and array
/// elements) and casts; nullopt otherwise.
std::optional<int64_t> getByteOffset(Value pointer, Value base,
                                     const DataLayout &layout) {
  int64_t offset = 0;
  while (pointer != base) {
    Operation *def = pointer.getDefiningOp();
    if (isa_and_nonnull<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def)) {
      pointer = def->getOperand(0);
      continue;
    }
    auto gep = dyn_cast_or_null<LLVM::GEPOp>(def);
    if (!gep || gep.getIndices().empty())
      return std::nullopt;
    SmallVector<int64_t> indices;
    for (auto index : gep.getIndices()) {
      APInt constant;
      if (auto attr = index.dyn_cast<IntegerAttr>())
        constant = attr.getValue();
      else if (!matchPattern(cast<Value>(index), m_ConstantInt(&constant)))
        return std::nullopt;
      indices.push_back(constant.getSExtValue());
    }
    std::optional<std::pair<int64_t, Type>> inner =
        nabla::raise::getAggregateLeaf(layout, gep.getElemType(),
                                       ArrayRef(indices).drop_front());
    if (!inner)
      return std::nullopt;
    offset += indices[0] * static_cast<int64_t>(
                               layout.getTypeSize(gep.getElemType())) +
              inner->first;
    pointer = gep.getBase();
  }
  return offset;
}

/// The loads and stores of `alloca` at constant offsets, or false when it
/// is used otherwise (escapes, memcpy, dynamic indices).
bool collectAccesses(LLVM::AllocaOp alloca, const DataLayout &layout,
                     SmallVectorImpl<std::pair<Operation *, int64_t>> &accesses) {
  SmallVector<Value> worklist = {alloca.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user) &&
          use.getOperandNumber() == 0) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(user)) {
        accesses.push_back({user, -1});
        continue;
      }
      Value address;
      if (auto load = dyn_cast<LLVM::LoadOp>(user))
        address = load.getAddr();
      else if (auto store = dyn_cast<LLVM::StoreOp>(user);
               store && store.getAddr() == value && store.getValue() != value)
        address = store.getAddr();
      if (!address)
        return false;
      std::optional<int64_t> offset =
          getByteOffset(address, alloca.getResult(), layout);
      if (!offset)
        return false;
      accesses.push_back({user, *offset});
    }
  }
  return true;
}

/// Forwards what a local struct's fields were stored to their loads (a
/// struct built field by field and read back, as an inlined callee reads its
/// by-value parameter): a pointer field then stays an SSA value the raise
/// can follow. Each field must be stored once, before (dominating) its
/// loads. Allocas whose loads all forward are erased.
void forwardLocalStores(LLVM::LLVMFuncOp func, const DataLayout &layout) {
  SmallVector<LLVM::AllocaOp> allocas;
  func.walk([&](LLVM::AllocaOp alloca) { allocas.push_back(alloca); });
  DominanceInfo dominance(func);
  for (LLVM::AllocaOp alloca : allocas) {
    SmallVector<std::pair<Operation *, int64_t>> accesses;
    if (!collectAccesses(alloca, layout, accesses))
      continue;
    DenseMap<int64_t, LLVM::StoreOp> stores;
    bool unique = true;
    for (auto [op, offset] : accesses)
      if (auto store = dyn_cast<LLVM::StoreOp>(op))
        unique &= stores.try_emplace(offset, store).second;
    // Stores to overlapping bytes at other offsets: give up.
    SmallVector<std::pair<int64_t, int64_t>> ranges;
    for (auto &[offset, store] : stores)
      ranges.push_back({offset, offset + static_cast<int64_t>(layout.getTypeSize(
                                             store.getValue().getType()))});
    llvm::sort(ranges);
    for (size_t i = 1; i < ranges.size(); ++i)
      unique &= ranges[i].first >= ranges[i - 1].second;
    if (!unique)
      continue;
    bool allForwarded = true;
    for (auto [op, offset] : accesses) {
      auto load = dyn_cast<LLVM::LoadOp>(op);
      if (!load)
        continue;
      LLVM::StoreOp source = stores.lookup(offset);
      if (!source || source.getValue().getType() != load.getResult().getType() ||
          !dominance.properlyDominates(source.getOperation(), load)) {
        allForwarded = false;
        continue;
      }
      load.getResult().replaceAllUsesWith(source.getValue());
    }
    if (!allForwarded)
      continue;
    // Only stores and address computations are left: erase the stores,
    // then the addresses, users first.
    for (auto [op, offset] : accesses)
      op->erase();
    SmallVector<Operation *> addresses;
    SmallVector<Value> worklist = {alloca.getResult()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        addresses.push_back(user);
        worklist.push_back(user->getResult(0));
      }
    }
    for (Operation *address : llvm::reverse(addresses))
      if (address->use_empty())
        address->erase();
    if (alloca->use_empty())
      alloca->erase();
  }
}

/// The bytes an alloca of one element holds; nullopt for other allocas.
std::optional<uint64_t> getAllocaSize(LLVM::AllocaOp alloca,
                                      const DataLayout &layout) {
  APInt count;
  if (!matchPattern(alloca.getArraySize(), m_ConstantInt(&count)) ||
      count != 1)
    return std::nullopt;
  return layout.getTypeSize(alloca.getElemType());
}

/// Whether every use of `pointer` (through address computations) satisfies
/// `isAllowed`.
bool allUsesAre(Value pointer, function_ref<bool(Operation *, Value)> isAllowed) {
  SmallVector<Value> worklist = {pointer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user) &&
          use.getOperandNumber() == 0)
        worklist.push_back(user->getResult(0));
      else if (!isAllowed(user, value))
        return false;
    }
  }
  return true;
}

bool isRead(Operation *user, Value pointer) {
  if (isa<LLVM::LoadOp, LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(user))
    return true;
  auto copy = dyn_cast<LLVM::MemcpyOp>(user);
  return copy && copy.getSrc() == pointer && copy.getDst() != pointer;
}

/// Whether a copy out of `source` at `copy` may be replaced by `source`
/// itself for reads the copy dominates: a read-only by-value parameter, or
/// a local whose every write is in the copy's block before it (a path from
/// the copy to a read that passed a write would pass the copy again).
bool isStableSource(Value source, LLVM::MemcpyOp copy, LLVM::LLVMFuncOp func,
                    const DataLayout &layout, uint64_t length) {
  if (auto argument = dyn_cast<BlockArgument>(source)) {
    if (argument.getOwner() != &func.getBody().front())
      return false;
    unsigned index = argument.getArgNumber();
    auto byval = func.getArgAttrOfType<TypeAttr>(
        index, LLVM::LLVMDialect::getByValAttrName());
    if (!byval)
      byval = func.getArgAttrOfType<TypeAttr>(
          index, LLVM::LLVMDialect::getByRefAttrName());
    return byval &&
           func.getArgAttr(index, LLVM::LLVMDialect::getReadonlyAttrName()) &&
           layout.getTypeSize(byval.getValue()) >= length;
  }
  auto alloca = source.getDefiningOp<LLVM::AllocaOp>();
  if (!alloca)
    return false;
  std::optional<uint64_t> size = getAllocaSize(alloca, layout);
  if (!size || *size < length)
    return false;
  Block *block = copy->getBlock();
  return allUsesAre(source, [&](Operation *user, Value pointer) {
    if (isRead(user, pointer))
      return true;
    bool writes = isa<LLVM::StoreOp>(user) &&
                  cast<LLVM::StoreOp>(user).getAddr() == pointer &&
                  cast<LLVM::StoreOp>(user).getValue() != pointer;
    writes |= isa<LLVM::MemcpyOp>(user) &&
              cast<LLVM::MemcpyOp>(user).getDst() == pointer;
    return writes && user->getBlock() == block && user->isBeforeInBlock(copy);
  });
}

/// clang copies a small struct as one integer (`load i64` from the source,
/// `store i64` into a local struct): such a copy of a whole local struct,
/// the store right after the load, becomes the memcpy it is, which
/// forwardCopies then sees through.
void integerCopiesToMemcpy(LLVM::LLVMFuncOp func, const DataLayout &layout) {
  SmallVector<LLVM::StoreOp> stores;
  func.walk([&](LLVM::StoreOp store) { stores.push_back(store); });
  for (LLVM::StoreOp store : stores) {
    auto load = store.getValue().getDefiningOp<LLVM::LoadOp>();
    auto alloca = store.getAddr().getDefiningOp<LLVM::AllocaOp>();
    if (!load || !alloca || !load->hasOneUse() ||
        !isa<IntegerType>(load.getType()) ||
        !isa<LLVM::LLVMStructType>(alloca.getElemType()) ||
        load->getNextNode() != store.getOperation() || load.getVolatile_() ||
        store.getVolatile_() ||
        load.getOrdering() != LLVM::AtomicOrdering::not_atomic ||
        store.getOrdering() != LLVM::AtomicOrdering::not_atomic)
      continue;
    std::optional<uint64_t> size = getAllocaSize(alloca, layout);
    if (!size || layout.getTypeSize(load.getType()) != *size)
      continue;
    OpBuilder builder(store);
    Value length = LLVM::ConstantOp::create(
        builder, store.getLoc(), builder.getI64Type(),
        builder.getI64IntegerAttr(static_cast<int64_t>(*size)));
    LLVM::MemcpyOp::create(builder, store.getLoc(), store.getAddr(),
                           load.getAddr(), length, /*isVolatile=*/false);
    store.erase();
    load.erase();
  }
}

/// Copies of a whole struct into a local that is only read afterwards:
/// clang copies a by-value struct it passes on, and the inliner copies a
/// by-value argument into the callee's own. The local's reads read the
/// source instead, so the fields stay values the raise can follow.
void forwardCopies(LLVM::LLVMFuncOp func, const DataLayout &layout) {
  DominanceInfo dominance(func);
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<LLVM::MemcpyOp> copies;
    func.walk([&](LLVM::MemcpyOp copy) { copies.push_back(copy); });
    for (LLVM::MemcpyOp copy : copies) {
      auto alloca = copy.getDst().getDefiningOp<LLVM::AllocaOp>();
      APInt length;
      if (!alloca || copy.getIsVolatile() ||
          !matchPattern(copy.getLen(), m_ConstantInt(&length)))
        continue;
      std::optional<uint64_t> size = getAllocaSize(alloca, layout);
      if (!size || length.getZExtValue() != *size ||
          !isStableSource(copy.getSrc(), copy, func, layout, *size))
        continue;
      // The local is only read, and only where the copy has happened.
      bool onlyReadAfter = allUsesAre(
          alloca.getResult(), [&](Operation *user, Value pointer) {
            if (user == copy.getOperation())
              return true;
            if (isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(user))
              return true;
            return isRead(user, pointer) &&
                   dominance.properlyDominates(copy.getOperation(), user);
          });
      if (!onlyReadAfter)
        continue;
      Value source = copy.getSrc();
      copy.erase();
      for (Operation *user : llvm::to_vector(alloca->getUsers()))
        if (isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(user))
          user->erase();
      alloca.getResult().replaceAllUsesWith(source);
      alloca.erase();
      changed = true;
    }
  }
}

} // namespace

/// True if `from` calls `to`, directly or through other functions of
/// `module` (`calls`: each function's direct callees, filled on demand).
static bool reaches(LLVM::LLVMFuncOp from, LLVM::LLVMFuncOp to,
                    ModuleOp module,
                    DenseMap<Operation *, SmallVector<LLVM::LLVMFuncOp>> &calls) {
  SmallVector<LLVM::LLVMFuncOp> worklist{from};
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    LLVM::LLVMFuncOp func = worklist.pop_back_val();
    if (!seen.insert(func).second)
      continue;
    auto known = calls.find(func);
    if (known == calls.end()) {
      SmallVector<LLVM::LLVMFuncOp> callees;
      func.walk([&](LLVM::CallOp call) {
        if (auto name = call.getCallee())
          if (auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(*name))
            callees.push_back(callee);
      });
      known = calls.try_emplace(func, std::move(callees)).first;
    }
    for (LLVM::LLVMFuncOp callee : known->second) {
      if (callee == to)
        return true;
      worklist.push_back(callee);
    }
  }
  return false;
}

LogicalResult nabla::raise::inlineAggregateCalls(ModuleOp module) {
  nabla::InlineEverything inliner(module.getContext());
  SetVector<LLVM::LLVMFuncOp> inlined;
  // A call that must be inlined of a recursive function is refused before
  // inlining: each round would multiply the calls (two recursive calls
  // double them, exhausting memory long before any round limit).
  {
    DenseMap<Operation *, SmallVector<LLVM::LLVMFuncOp>> calls;
    LLVM::CallOp recursive;
    module.walk([&](LLVM::CallOp call) {
      auto name = call.getCallee();
      if (!name || recursive)
        return;
      // A callee on a cycle of calls: inlining it never ends (its own
      // calls may need inlining only once it is inlined: given the
      // caller's local memory).
      auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(*name);
      if (callee && mustInline(call, callee, module) &&
          reaches(callee, callee, module, calls))
        recursive = call;
    });
    if (recursive)
      return emitError(recursive.getLoc())
             << "cannot raise a recursive call of a function that takes or "
                "returns a struct or is given local or workgroup memory";
  }
  // A callee's own calls are inlined by later rounds; a chain longer than
  // this is recursion.
  constexpr unsigned kMaxRounds = 64;
  for (unsigned round = 0;; ++round) {
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      auto name = call.getCallee();
      if (!name)
        return;
      auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(*name);
      if (callee && mustInline(call, callee, module))
        calls.push_back(call);
    });
    if (calls.empty())
      break;
    if (round == kMaxRounds)
      return emitError(calls.front().getLoc())
             << "cannot raise a recursive call of a function that takes or "
                "returns a struct or is given local or workgroup memory";
    for (LLVM::CallOp call : calls) {
      auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(*call.getCallee());
      inlined.insert(callee);
      if (failed(inlineCall(inliner, nabla::cloneInlinedBody, call, callee,
                            &callee.getBody())))
        return call.emitError("cannot inline the call of @")
               << callee.getName()
               << " (the raise gives device functions scalars and global "
                  "buffers only)";
      call.erase();
    }
  }
  for (LLVM::LLVMFuncOp func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal() && failed(scalarizeAggregateBlockArguments(func)))
      return failure();
  // The fields of a result are read with extractvalue: fold them into the
  // values the callee built (insertvalue chains).
  SmallVector<Operation *> extracts;
  module.walk([&](LLVM::ExtractValueOp op) { extracts.push_back(op); });
  (void)applyOpPatternsGreedily(extracts, FrozenRewritePatternSet());
  // The structs are then built for nothing.
  bool erased = true;
  while (erased) {
    erased = false;
    module.walk([&](Operation *op) {
      if (op->getNumResults() == 1 && isAggregate(op->getResult(0).getType()) &&
          isOpTriviallyDead(op)) {
        op->erase();
        erased = true;
      }
    });
  }
  // What inlining left in local memory: copies of structs, structs built
  // and read back.
  DataLayout layout(module);
  for (LLVM::LLVMFuncOp func : module.getOps<LLVM::LLVMFuncOp>()) {
    if (func.isExternal())
      continue;
    integerCopiesToMemcpy(func, layout);
    forwardCopies(func, layout);
    forwardLocalStores(func, layout);
  }
  // Functions now called nowhere are not raised.
  for (LLVM::LLVMFuncOp func : inlined)
    if (SymbolTable::symbolKnownUseEmpty(func, module))
      func.erase();
  return success();
}
