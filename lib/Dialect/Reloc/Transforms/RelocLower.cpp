//===- RelocLower.cpp - Lower reloc ops with a relocation strategy --------===//
//
// Turns relocation records into what the target binary holds: a baked
// address, a materialized constant copy, or an external symbol the frontend
// resolves (defer). Each strategy checks that the record carries what it
// needs and names the record otherwise.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/Transforms/Passes.h"

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/IR/SymbolTable.h"

namespace nabla::reloc {
#define GEN_PASS_DEF_RELOCLOWER
#include "nabla/Dialect/Reloc/Transforms/Passes.h.inc"
} // namespace nabla::reloc

using namespace mlir;
using namespace nabla::reloc;

namespace {

/// A symbol name derived from a key ("Main.:x" → "Main___x").
std::string symbolForKey(StringRef key) {
  std::string name;
  for (char c : key)
    name += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return name;
}

struct RelocLower : public nabla::reloc::impl::RelocLowerBase<RelocLower> {
  using Base::Base;

  void runOnOperation() override {
    if (strategy == "patch" || strategy == "table") {
      getOperation().emitError("reloc-lower strategy '")
          << strategy
          << "' (load-time patching by Nabla's runtime) is not implemented "
             "yet; use bake, materialize or defer";
      return signalPassFailure();
    }
    if (strategy != "bake" && strategy != "materialize" &&
        strategy != "defer") {
      getOperation().emitError("unknown reloc-lower strategy '")
          << strategy
          << "' (expected bake, patch, table, materialize or "
             "defer)";
      return signalPassFailure();
    }
    SmallVector<GlobalOp> globals;
    getOperation().walk([&](GlobalOp global) { globals.push_back(global); });
    for (GlobalOp global : globals)
      if (failed(lower(global)))
        return signalPassFailure();
  }

  LogicalResult lower(GlobalOp global) {
    Operation *table = SymbolTable::getNearestSymbolTable(global);
    SymbolTable symbols(table);
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(global, table);
    SmallVector<Operation *> users;
    if (uses)
      for (const SymbolTable::SymbolUse &use : *uses)
        if (isa<GetGlobalOp, AddressOfOp>(use.getUser()))
          users.push_back(use.getUser());
    // Replacements go at the start of the table, once the record is erased.
    Block &tableBody = table->getRegion(0).front();
    OpBuilder builder(global->getContext());
    Type type = global.getGlobalType();

    if (strategy == "bake") {
      auto pointer = dyn_cast<LLVM::LLVMPointerType>(type);
      if (!pointer)
        return global.emitOpError("cannot be baked: only pointer records "
                                  "have a bakeable address (use "
                                  "materialize or defer for memrefs)");
      std::optional<int64_t> address = global.getAddress();
      if (!address)
        return global.emitOpError("has no known address to bake (the v1 "
                                  "convention needs 'address')");
      for (Operation *user : users) {
        OpBuilder at(user);
        Value integer =
            LLVM::ConstantOp::create(at, user->getLoc(), at.getI64Type(),
                                     at.getI64IntegerAttr(*address));
        Value baked =
            LLVM::IntToPtrOp::create(at, user->getLoc(), pointer, integer);
        user->getResult(0).replaceAllUsesWith(baked);
        user->erase();
      }
      symbols.erase(global);
      return success();
    }

    if (strategy == "materialize") {
      auto memref = dyn_cast<MemRefType>(type);
      std::optional<ElementsAttr> value = global.getValue();
      if (!memref || !memref.hasStaticShape() || !value)
        return global.emitOpError("cannot be materialized: it needs a "
                                  "statically shaped memref type and a known "
                                  "'value'");
      std::string name = global.getSymName().str();
      Location loc = global.getLoc();
      bool constant = global.getConstant();
      ElementsAttr initial = *value;
      symbols.erase(global);
      builder.setInsertionPointToStart(&tableBody);
      auto copy = memref::GlobalOp::create(
          builder, loc, name, builder.getStringAttr("private"), memref, initial,
          constant, IntegerAttr());
      symbols.insert(copy);
      for (Operation *user : users) {
        OpBuilder at(user);
        auto get = memref::GetGlobalOp::create(at, user->getLoc(), memref,
                                               copy.getSymName());
        user->getResult(0).replaceAllUsesWith(get.getResult());
        user->erase();
      }
      return success();
    }

    // defer: an external symbol per record, named after its key.
    std::string name = symbolForKey(global.getKey());
    Location loc = global.getLoc();
    std::string key = global.getKey().str();
    bool constant = global.getConstant();
    symbols.erase(global);
    if (symbols.lookup(name))
      return table->emitError("reloc-lower: symbol @")
             << name << " for key \"" << key << "\" already exists";
    builder.setInsertionPointToStart(&tableBody);
    if (auto memref = dyn_cast<MemRefType>(type)) {
      auto decl = memref::GlobalOp::create(
          builder, loc, name, builder.getStringAttr("public"), memref,
          Attribute(), constant, IntegerAttr());
      symbols.insert(decl);
      for (Operation *user : users) {
        OpBuilder at(user);
        auto get =
            memref::GetGlobalOp::create(at, user->getLoc(), memref, name);
        user->getResult(0).replaceAllUsesWith(get.getResult());
        user->erase();
      }
      return success();
    }
    auto pointer = cast<LLVM::LLVMPointerType>(type);
    auto decl = LLVM::GlobalOp::create(
        builder, loc, builder.getI8Type(), constant, LLVM::Linkage::External,
        name, Attribute(), /*alignment=*/0, pointer.getAddressSpace());
    symbols.insert(decl);
    for (Operation *user : users) {
      OpBuilder at(user);
      auto address = LLVM::AddressOfOp::create(at, user->getLoc(), pointer,
                                               decl.getSymName());
      user->getResult(0).replaceAllUsesWith(address.getResult());
      user->erase();
    }
    return success();
  }
};

} // namespace
