//===- RelocRaise.cpp - Raise legacy host-object references ---------------===//
//
// Finds, in every gpu.module, the uses of host objects a frontend left in the
// v1 (baked address, inline or in a slot global) or v2 (external declaration,
// LLVM or memref) shape, follows each use through its address-space-cast
// chain to the type it is really used with, and replaces the chain by one
// reloc.addressof / reloc.get_global of a record keyed as the module's maps
// say.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/Transforms/Passes.h"

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// Follows a single-use address-space-cast chain (`llvm.addrspacecast`,
/// `memref.memory_space_cast`) from `value`; returns the last value of the
/// chain (the one with the type the object is used as).
Value followCasts(Value value) {
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (!isa<LLVM::AddrSpaceCastOp, memref::MemorySpaceCastOp>(user))
      break;
    value = user->getResult(0);
  }
  return value;
}

/// The constant address a v1 slot global is initialised with (its
/// initializer returns `llvm.inttoptr` of a constant), or std::nullopt.
std::optional<APInt> getSlotAddress(LLVM::GlobalOp slot) {
  Block *init = slot.getInitializerBlock();
  if (!init)
    return std::nullopt;
  auto ret = dyn_cast<LLVM::ReturnOp>(init->getTerminator());
  auto cast = ret && ret.getNumOperands()
                  ? ret.getOperand(0).getDefiningOp<LLVM::IntToPtrOp>()
                  : LLVM::IntToPtrOp();
  IntegerAttr value;
  if (!cast || !matchPattern(cast.getArg(), m_Constant(&value)))
    return std::nullopt;
  return value.getValue();
}

/// True if `global` declares an object without contents (the v2 shape).
bool isDeclaration(Operation *global) {
  if (auto llvmGlobal = dyn_cast<LLVM::GlobalOp>(global))
    return !llvmGlobal.getValue() && llvmGlobal.getInitializerRegion().empty();
  if (auto memrefGlobal = dyn_cast<memref::GlobalOp>(global))
    return memrefGlobal.isExternal();
  return false;
}

/// The global an addressof/get_global names, or null.
Operation *getReferencedGlobal(Operation *op) {
  FlatSymbolRefAttr name;
  if (auto addressOf = dyn_cast<LLVM::AddressOfOp>(op))
    name = addressOf.getGlobalNameAttr();
  else if (auto get = dyn_cast<memref::GetGlobalOp>(op))
    name = get.getNameAttr();
  return name ? SymbolTable::lookupNearestSymbolFrom(op, name) : nullptr;
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
    auto keyForAddress = [&](const APInt &address) -> StringAttr {
      if (!addressMap)
        return {};
      return addressMap.getAs<StringAttr>(
          std::to_string(address.getZExtValue()));
    };
    module.walk([&](Operation *op) {
      if (isa<LLVM::AddressOfOp, memref::GetGlobalOp>(op)) {
        auto name = op->getAttrOfType<FlatSymbolRefAttr>(
            isa<LLVM::AddressOfOp>(op) ? "global_name" : "name");
        auto key = gvToValue ? gvToValue.getAs<StringAttr>(name.getValue())
                             : StringAttr();
        Operation *global = SymbolTable::lookupNearestSymbolFrom(op, name);
        // Materialized objects (with initializers) stay as they are.
        if (key && global && isDeclaration(global)) {
          bool constant = isa<LLVM::GlobalOp>(global)
                              ? cast<LLVM::GlobalOp>(global).getConstant()
                              : cast<memref::GlobalOp>(global).getConstant();
          references.push_back({op, key.str(), std::nullopt, constant});
        }
      } else if (auto cast = dyn_cast<LLVM::IntToPtrOp>(op)) {
        // Initializers of slot globals are handled through their loads.
        if (isa<LLVM::GlobalOp>(op->getParentOp()))
          return;
        IntegerAttr value;
        if (!matchPattern(cast.getArg(), m_Constant(&value)))
          return;
        if (StringAttr key = keyForAddress(value.getValue()))
          references.push_back(
              {op, key.str(), value.getValue().getSExtValue(), true});
      } else if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
        // A v1 slot: a global initialised with a baked address, loaded.
        auto address = load.getAddr().getDefiningOp<LLVM::AddressOfOp>();
        auto slot = address
                        ? SymbolTable::lookupNearestSymbolFrom<LLVM::GlobalOp>(
                              op, address.getGlobalNameAttr())
                        : LLVM::GlobalOp();
        std::optional<APInt> baked = slot ? getSlotAddress(slot) : std::nullopt;
        if (!baked || !isa<LLVM::LLVMPointerType>(load.getType()))
          return;
        if (StringAttr key = keyForAddress(*baked))
          references.push_back({op, key.str(), baked->getSExtValue(), true});
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
      Value use;
      if (isa<MemRefType>(global.getGlobalType()))
        use = GetGlobalOp::create(at, reference.root->getLoc(),
                                  global.getGlobalType(), global.getSymName());
      else
        use = AddressOfOp::create(at, reference.root->getLoc(),
                                  global.getGlobalType(), global.getSymName());
      last.replaceAllUsesWith(use);
      // Erase the now dead chain, back to the root (and, for a slot load,
      // the slot's address).
      Operation *op = last.getDefiningOp();
      while (op && op->use_empty()) {
        Operation *next =
            op->getNumOperands() ? op->getOperand(0).getDefiningOp() : nullptr;
        bool wasRoot = op == reference.root;
        if (Operation *decl = getReferencedGlobal(op))
          declarations.insert(decl);
        op->erase();
        if (wasRoot && !isa_and_nonnull<LLVM::AddressOfOp>(next))
          break;
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
