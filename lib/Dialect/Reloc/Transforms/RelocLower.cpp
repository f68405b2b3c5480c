//===- RelocLower.cpp - Lower reloc ops with a relocation strategy --------===//
//
// Turns relocation records into what the target binary holds: a baked
// address, a materialized constant copy, a writable global the loader patches,
// an extra kernel parameter (the table binding of SPIR-V and Metal), or an
// external symbol the frontend resolves (defer). Records nothing uses are
// pruned first. Each strategy checks that a record carries what it needs and
// names the record otherwise. Every name is derived from the record's key, so
// the output does not depend on the session.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/Transforms/Passes.h"
#include "nabla/Support/OptionNames.h"

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/MapVector.h"

#include <map>
#include <set>

namespace nabla::reloc {
#define GEN_PASS_DEF_RELOCLOWER
#include "nabla/Dialect/Reloc/Transforms/Passes.h.inc"
} // namespace nabla::reloc

using namespace mlir;
using namespace nabla::reloc;

namespace {

enum class Strategy {
  Bake,
  Patch,
  Table,
  Materialize,
  Defer,
  BakeOrMaterialize
};

std::optional<Strategy> parseStrategy(StringRef name) {
  return llvm::StringSwitch<std::optional<Strategy>>(name)
      .Case("bake", Strategy::Bake)
      .Case("patch", Strategy::Patch)
      .Case("table", Strategy::Table)
      .Case("materialize", Strategy::Materialize)
      .Case("defer", Strategy::Defer)
      .Case("bake-or-materialize", Strategy::BakeOrMaterialize)
      .Default(std::nullopt);
}

/// Replaces each use op (get_global/addressof) by what `build` creates at it.
void replaceUses(ArrayRef<Operation *> uses,
                 function_ref<Value(OpBuilder &, Location)> build) {
  for (Operation *use : uses) {
    OpBuilder at(use);
    use->getResult(0).replaceAllUsesWith(build(at, use->getLoc()));
    use->erase();
  }
}

LogicalResult bake(GlobalOp record, ArrayRef<Operation *> uses) {
  auto pointer = dyn_cast<LLVM::LLVMPointerType>(record.getGlobalType());
  if (!pointer)
    return record.emitOpError("cannot be baked: only pointer records have a "
                              "bakeable address (use materialize or defer "
                              "for memrefs)");
  std::optional<int64_t> address = record.getAddress();
  if (!address)
    return record.emitOpError("has no known address to bake (the v1 "
                              "convention needs 'address')");
  replaceUses(uses, [&](OpBuilder &b, Location loc) -> Value {
    Value integer = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                             b.getI64IntegerAttr(*address));
    return LLVM::IntToPtrOp::create(b, loc, pointer, integer);
  });
  record.erase();
  return success();
}

/// Inserts `op` at the start of the record's symbol table, where the record
/// was, once the record is erased.
template <typename OpTy, typename... Args>
OpTy replaceRecord(GlobalOp record, Args &&...args) {
  Operation *table = SymbolTable::getNearestSymbolTable(record);
  Location loc = record.getLoc();
  // Erase first: an insertion point before the record would dangle.
  record.erase();
  OpBuilder builder = OpBuilder::atBlockBegin(&table->getRegion(0).front());
  return OpTy::create(builder, loc, std::forward<Args>(args)...);
}

LogicalResult materialize(GlobalOp record, ArrayRef<Operation *> uses) {
  auto memref = dyn_cast<MemRefType>(record.getGlobalType());
  std::optional<ElementsAttr> value = record.getValue();
  if (!memref || !memref.hasStaticShape() || !value)
    return record.emitOpError("cannot be materialized: it needs a statically "
                              "shaped memref type and a known 'value'")
           << " (the contents of '" << record.getKey()
           << "' are not known when compiling ahead of time: give them "
              "with nabla-compile --reloc="
           << record.getKey()
           << "=FILE.npy, or compile with abi=v2 and give the object when "
              "launching)";
  if (!record.getConstant())
    return record.emitOpError("cannot be materialized: the kernels may write "
                              "it, and a private copy would lose the writes "
                              "(use patch, table or defer)");
  std::string name = record.getSymName().str();
  ElementsAttr initial = *value;
  OpBuilder attrs(record.getContext());
  auto copy = replaceRecord<memref::GlobalOp>(
      record, name, attrs.getStringAttr("private"), memref, initial,
      /*constant=*/true, IntegerAttr());
  replaceUses(uses, [&](OpBuilder &b, Location loc) -> Value {
    return memref::GetGlobalOp::create(b, loc, memref, copy.getSymName());
  });
  return success();
}

/// Fails if `name` is taken in the record's symbol table.
LogicalResult checkFree(GlobalOp record, StringRef name) {
  Operation *table = SymbolTable::getNearestSymbolTable(record);
  if (SymbolTable::lookupSymbolIn(table, name))
    return record.emitOpError("cannot be lowered: the symbol @")
           << name << " derived from key \"" << record.getKey()
           << "\" already exists";
  return success();
}

/// A global `name` for a memref record (`initial` null: a declaration) or a
/// pointer record (the slot holding its address, or an i8 declaration).
LogicalResult lowerToGlobal(GlobalOp record, ArrayRef<Operation *> uses,
                            StringRef name, bool declaration) {
  if (failed(checkFree(record, name)))
    return failure();
  MLIRContext *context = record.getContext();
  OpBuilder b(context);
  NamedAttribute keyAttr(b.getStringAttr(kRecordKeyAttrName),
                         b.getStringAttr(record.getKey()));
  bool constant = record.getConstant() && declaration;
  if (auto memref = dyn_cast<MemRefType>(record.getGlobalType())) {
    Attribute initial;
    if (!declaration) {
      if (!memref.hasStaticShape())
        return record.emitOpError("cannot be patched: the loader copies the "
                                  "object into a global of fixed size, so "
                                  "the memref needs a static shape (use "
                                  "table or defer)");
      auto tensor =
          RankedTensorType::get(memref.getShape(), memref.getElementType());
      initial = DenseElementsAttr::get(tensor,
                                       b.getZeroAttr(memref.getElementType()));
    }
    auto global = replaceRecord<memref::GlobalOp>(
        record, name, b.getStringAttr("public"), memref, initial, constant,
        IntegerAttr());
    global->setAttr(keyAttr.getName(), keyAttr.getValue());
    replaceUses(uses, [&](OpBuilder &at, Location loc) -> Value {
      return memref::GetGlobalOp::create(at, loc, memref, name);
    });
    return success();
  }
  auto pointer = cast<LLVM::LLVMPointerType>(record.getGlobalType());
  if (declaration) {
    auto global = replaceRecord<LLVM::GlobalOp>(
        record, b.getI8Type(), constant, LLVM::Linkage::External, name,
        Attribute(), /*alignment=*/0, pointer.getAddressSpace());
    global->setAttr(keyAttr.getName(), keyAttr.getValue());
    replaceUses(uses, [&](OpBuilder &at, Location loc) -> Value {
      return LLVM::AddressOfOp::create(at, loc, pointer, name);
    });
    return success();
  }
  // patch: a zero-initialised slot in global memory holding the address.
  constexpr unsigned kGlobalAddressSpace = 1;
  auto global = replaceRecord<LLVM::GlobalOp>(
      record, pointer, /*isConstant=*/false, LLVM::Linkage::External, name,
      Attribute(), /*alignment=*/8, kGlobalAddressSpace);
  global->setAttr(keyAttr.getName(), keyAttr.getValue());
  Block *init = b.createBlock(&global.getInitializerRegion());
  b.setInsertionPointToStart(init);
  Value null = LLVM::ZeroOp::create(b, global.getLoc(), pointer);
  LLVM::ReturnOp::create(b, global.getLoc(), null);
  auto slotType = LLVM::LLVMPointerType::get(context, kGlobalAddressSpace);
  replaceUses(uses, [&](OpBuilder &at, Location loc) -> Value {
    Value slot = LLVM::AddressOfOp::create(at, loc, slotType, name);
    return LLVM::LoadOp::create(at, loc, pointer, slot);
  });
  return success();
}

/// `table`: every function that uses records, directly or through calls, gets
/// one trailing memref parameter per record (in key order) carrying the
/// argument attribute `reloc.key`; calls pass them on. Kernels thus receive
/// each object as an extra buffer binding the loader fills.
LogicalResult lowerToTable(Operation *table, ArrayRef<GlobalOp> records) {
  std::map<std::string, GlobalOp> byKey;
  for (GlobalOp record : records) {
    if (!isa<MemRefType>(record.getGlobalType()))
      return record.emitOpError("cannot go into a table: table bindings hold "
                                "memref objects (use patch, bake or defer "
                                "for pointer records)");
    byKey[record.getKey().str()] = record;
  }
  // Records each function needs, directly or through its callees.
  DenseMap<Operation *, std::set<std::string>> needs;
  SmallVector<FunctionOpInterface> functions;
  for (Operation &op : table->getRegion(0).front())
    if (auto function = dyn_cast<FunctionOpInterface>(&op))
      functions.push_back(function);
  for (FunctionOpInterface function : functions)
    function->walk([&](GetGlobalOp get) {
      if (auto record = SymbolTable::lookupNearestSymbolFrom<GlobalOp>(
              get, get.getGlobalNameAttr()))
        needs[function].insert(record.getKey().str());
    });
  for (bool changed = true; changed;) {
    changed = false;
    for (FunctionOpInterface function : functions)
      function->walk([&](func::CallOp call) {
        Operation *callee =
            SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr());
        if (!callee || callee == function.getOperation())
          return;
        std::set<std::string> &mine = needs[function];
        for (const std::string &key : needs[callee])
          changed |= mine.insert(key).second;
      });
  }

  // New parameters first, so that calls can pass the caller's.
  DenseMap<Operation *, std::map<std::string, Value>> parameters;
  for (FunctionOpInterface function : functions) {
    auto it = needs.find(function);
    if (it == needs.end() || it->second.empty())
      continue;
    if (function.isExternal())
      continue;
    for (const std::string &key : it->second) {
      GlobalOp record = byKey[key];
      unsigned index = function.getNumArguments();
      OpBuilder b(function.getContext());
      if (failed(function.insertArgument(
              index, record.getGlobalType(),
              b.getDictionaryAttr(
                  b.getNamedAttr(kRecordKeyAttrName, b.getStringAttr(key))),
              record.getLoc())))
        return function->emitOpError("cannot take the table parameter of "
                                     "relocation record '")
               << key << "'";
      parameters[function][key] = function.getArgument(index);
    }
  }
  WalkResult result = WalkResult::advance();
  for (FunctionOpInterface function : functions) {
    std::map<std::string, Value> &mine = parameters[function];
    result = function->walk([&](Operation *op) {
      if (auto get = dyn_cast<GetGlobalOp>(op)) {
        auto record = SymbolTable::lookupNearestSymbolFrom<GlobalOp>(
            get, get.getGlobalNameAttr());
        get.replaceAllUsesWith(mine[record.getKey().str()]);
        get.erase();
        return WalkResult::advance();
      }
      if (auto call = dyn_cast<func::CallOp>(op)) {
        Operation *callee =
            SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr());
        if (!callee || !needs.count(callee) || needs[callee].empty())
          return WalkResult::advance();
        if (callee == function.getOperation()) {
          call.emitOpError("is a recursive call of a function that reads "
                           "relocated objects, which the table strategy "
                           "cannot thread through");
          return WalkResult::interrupt();
        }
        SmallVector<Value> operands(call.getOperands());
        for (const std::string &key : needs[callee])
          operands.push_back(mine[key]);
        call->setOperands(operands);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
  }
  for (GlobalOp record : records)
    record.erase();
  return success();
}

struct RelocLower : public nabla::SuggestOptionNames<
                        nabla::reloc::impl::RelocLowerBase<RelocLower>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    std::optional<Strategy> parsed = parseStrategy(strategy);
    if (!parsed) {
      getOperation().emitError("unknown reloc-lower strategy '")
          << strategy
          << "' (expected bake, patch, table, materialize, defer or "
             "bake-or-materialize)";
      return signalPassFailure();
    }
    // Records grouped by symbol table, in IR order.
    llvm::MapVector<Operation *, SmallVector<GlobalOp>> tables;
    getOperation().walk([&](GlobalOp record) {
      tables[SymbolTable::getNearestSymbolTable(record)].push_back(record);
    });
    for (auto &[table, records] : tables)
      if (failed(lowerTable(table, records, *parsed)))
        return signalPassFailure();
  }

  LogicalResult lowerTable(Operation *table, ArrayRef<GlobalOp> all,
                           Strategy chosen) {
    // Unused records are pruned: nothing needs to provide them.
    SmallVector<GlobalOp> used;
    SmallVector<SmallVector<Operation *>> uses;
    for (GlobalOp record : all) {
      SmallVector<Operation *> recordUses = record.collectUses();
      if (recordUses.empty())
        continue;
      used.push_back(record);
      uses.push_back(std::move(recordUses));
    }
    for (GlobalOp record : all)
      if (!llvm::is_contained(used, record))
        record.erase();
    if (chosen == Strategy::Table)
      return lowerToTable(table, used);
    for (auto [record, recordUses] : llvm::zip(used, uses))
      if (failed(lowerRecord(record, recordUses, chosen)))
        return failure();
    return success();
  }

  LogicalResult lowerRecord(GlobalOp record, ArrayRef<Operation *> uses,
                            Strategy chosen) {
    switch (chosen) {
    case Strategy::Bake:
      return bake(record, uses);
    case Strategy::Materialize:
      return materialize(record, uses);
    case Strategy::BakeOrMaterialize:
      if (isa<LLVM::LLVMPointerType>(record.getGlobalType()))
        return bake(record, uses);
      return materialize(record, uses);
    case Strategy::Patch:
      return lowerToGlobal(record, uses, getPatchSymbol(record.getKey()),
                           /*declaration=*/false);
    case Strategy::Defer:
      return lowerToGlobal(record, uses, getKeySymbol(record.getKey()),
                           /*declaration=*/true);
    case Strategy::Table:
      break;
    }
    llvm_unreachable("table records are lowered together");
  }
};

} // namespace
