//===- RelocRaise.cpp - Raise legacy host-object references ---------------===//
//
// Finds, in every gpu.module, the uses of host objects a frontend left in the
// v1 (baked address) or v2 (external declaration) shape, follows each use
// through its address-space-cast chain to the type it is really used with,
// and replaces the chain by one reloc.addressof of a record keyed as the
// module's maps say.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/Transforms/Passes.h"

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include <map>

namespace nabla::reloc {
#define GEN_PASS_DEF_RELOCRAISE
#include "nabla/Dialect/Reloc/Transforms/Passes.h.inc"
} // namespace nabla::reloc

using namespace mlir;
using namespace nabla::reloc;

namespace {

/// One legacy reference: the op producing the address and what it names.
struct Reference {
  Operation *root;
  std::string key;
  std::optional<int64_t> address;
  bool constant = false;
};

/// Follows a single-use address-space-cast chain from `value`; returns the
/// last value of the chain (the one with the type the object is used as).
Value followCasts(Value value) {
  while (value.hasOneUse())
    if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(*value.getUsers().begin()))
      value = cast.getResult();
    else
      break;
  return value;
}

struct RelocRaise : public nabla::reloc::impl::RelocRaiseBase<RelocRaise> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    auto gvToValue = top->getAttrOfType<DictionaryAttr>("reloc.gv_to_value");
    auto addressMap = top->getAttrOfType<DictionaryAttr>("reloc.address_map");
    if (!gvToValue && !addressMap)
      return;
    WalkResult result = top.walk([&](gpu::GPUModuleOp module) {
      return raise(module, gvToValue, addressMap) ? WalkResult::advance()
                                                  : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  bool raise(gpu::GPUModuleOp module, DictionaryAttr gvToValue,
             DictionaryAttr addressMap) {
    SmallVector<Reference> references;
    module.walk([&](Operation *op) {
      if (auto addressOf = dyn_cast<LLVM::AddressOfOp>(op)) {
        auto key = gvToValue
                       ? gvToValue.getAs<StringAttr>(addressOf.getGlobalName())
                       : StringAttr();
        auto global = SymbolTable::lookupNearestSymbolFrom<LLVM::GlobalOp>(
            op, addressOf.getGlobalNameAttr());
        // Materialized objects (with initializers) stay as they are.
        if (key && global && !global.getValue() &&
            global.getInitializerRegion().empty())
          references.push_back(
              {op, key.str(), std::nullopt, global.getConstant()});
      } else if (auto cast = dyn_cast<LLVM::IntToPtrOp>(op)) {
        IntegerAttr value;
        if (!addressMap || !matchPattern(cast.getArg(), m_Constant(&value)))
          return;
        std::string text = std::to_string(value.getValue().getZExtValue());
        if (auto key = addressMap.getAs<StringAttr>(text))
          references.push_back(
              {op, key.str(), value.getValue().getSExtValue(), true});
      }
    });
    if (references.empty())
      return true;

    // One record per key and use type, created in key order.
    std::map<std::string, GlobalOp> records;
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    SymbolTable symbols(module);
    std::map<std::string, std::pair<Type, Reference *>> byKey;
    for (Reference &reference : references) {
      Type type = followCasts(reference.root->getResult(0)).getType();
      auto [it, inserted] = byKey.insert({reference.key, {type, &reference}});
      if (!inserted && it->second.first != type) {
        reference.root->emitOpError("host object \"")
            << reference.key << "\" is used as both " << it->second.first
            << " and " << type << "; one record has one type";
        return false;
      }
    }
    unsigned counter = 0;
    for (auto &[key, entry] : byKey) {
      Reference &first = *entry.second;
      std::string name = "reloc_" + std::to_string(counter++);
      while (symbols.lookup(name))
        name = "reloc_" + std::to_string(counter++);
      auto global = GlobalOp::create(
          builder, first.root->getLoc(), name, entry.first, key, first.constant,
          RecordKind::Object, IntegerAttr(), IntegerAttr(), ElementsAttr(),
          first.address ? builder.getI64IntegerAttr(*first.address)
                        : IntegerAttr(),
          FlatSymbolRefAttr());
      symbols.insert(global);
      records[key] = global;
    }

    // Replace each chain by one reloc.addressof in the used type.
    DenseSet<Operation *> declarations;
    for (Reference &reference : references) {
      Value last = followCasts(reference.root->getResult(0));
      GlobalOp global = records[reference.key];
      OpBuilder at(last.getDefiningOp());
      at.setInsertionPointAfter(last.getDefiningOp());
      auto use =
          AddressOfOp::create(at, reference.root->getLoc(),
                              global.getGlobalType(), global.getSymName());
      last.replaceAllUsesWith(use.getResult());
      // Erase the now dead chain, back to the root.
      Operation *op = last.getDefiningOp();
      while (op && op->use_empty()) {
        Operation *next =
            op == reference.root ? nullptr : op->getOperand(0).getDefiningOp();
        if (auto addressOf = dyn_cast<LLVM::AddressOfOp>(op))
          if (Operation *decl = SymbolTable::lookupNearestSymbolFrom(
                  op, addressOf.getGlobalNameAttr()))
            declarations.insert(decl);
        op->erase();
        op = next;
      }
    }
    // Declarations nothing refers to any more go too.
    for (Operation *decl : declarations)
      if (SymbolTable::symbolKnownUseEmpty(decl, module))
        decl->erase();
    return true;
  }
};

} // namespace
