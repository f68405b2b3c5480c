//===- RelocOps.cpp - Operations of the reloc dialect ---------------------===//
//
// Verification of relocation records and their uses. A record's own fields are
// checked by its verifier (including key uniqueness among its siblings); the
// uses and `shadow_of` resolve their symbols in the symbol-use verifier.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

#include <cstdio>

using namespace mlir;
using namespace nabla::reloc;

//===----------------------------------------------------------------------===//
// GlobalOp
//===----------------------------------------------------------------------===//

/// Byte size implied by a statically shaped memref of numeric elements.
static std::optional<int64_t> getImpliedByteSize(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return std::nullopt;
  Type element = memref.getElementType();
  if (!element.isIntOrIndexOrFloat() || element.isIndex())
    return std::nullopt;
  int64_t bits = element.getIntOrFloatBitWidth();
  return memref.getNumElements() * ((bits + 7) / 8);
}

std::optional<int64_t> GlobalOp::getByteSize() {
  if (std::optional<int64_t> size = getSize())
    return *size;
  return getImpliedByteSize(getGlobalType());
}

/// Byte size of a dense `value`, or std::nullopt for non-numeric elements.
static std::optional<int64_t> getValueByteSize(ElementsAttr value) {
  auto shaped = cast<ShapedType>(value.getType());
  Type element = shaped.getElementType();
  if (!element.isIntOrFloat() || !shaped.hasStaticShape())
    return std::nullopt;
  return shaped.getNumElements() * ((element.getIntOrFloatBitWidth() + 7) / 8);
}

SmallVector<Operation *> GlobalOp::collectUses() {
  SmallVector<Operation *> users;
  Operation *table = SymbolTable::getNearestSymbolTable(*this);
  if (!table)
    return users;
  if (std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(*this, table))
    for (const SymbolTable::SymbolUse &use : *uses)
      if (isa<GetGlobalOp, AddressOfOp>(use.getUser()))
        users.push_back(use.getUser());
  return users;
}

std::string nabla::reloc::getKeySymbol(StringRef key) {
  std::string name;
  for (char c : key)
    name += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return name;
}

std::string nabla::reloc::getPatchSymbol(StringRef key) {
  // FNV-1a of the key keeps keys that sanitize alike ("a.b", "a_b") apart.
  uint32_t hash = 2166136261u;
  for (char c : key)
    hash = (hash ^ static_cast<uint8_t>(c)) * 16777619u;
  char suffix[9];
  snprintf(suffix, sizeof(suffix), "%08x", hash);
  return "__reloc_" + getKeySymbol(key) + "_" + suffix;
}

LogicalResult GlobalOp::verify() {
  if (getKey().empty())
    return emitOpError("requires a non-empty 'key'");

  Type type = getGlobalType();
  if (!isa<MemRefType, mlir::LLVM::LLVMPointerType>(type))
    return emitOpError("type must be a ranked memref or an !llvm.ptr, got ")
           << type;
  // Host objects are loaded, patched and listed as plain numbers.
  if (auto memref = dyn_cast<MemRefType>(type);
      memref && !memref.getElementType().isIntOrIndexOrFloat())
    return emitOpError("memref elements must be integers, floats or index, "
                       "got ")
           << memref.getElementType();

  if (getKind() == RecordKind::Word && !getOffset())
    return emitOpError("a 'word' record requires an 'offset'");
  if (getKind() == RecordKind::Object && getOffset())
    return emitOpError("'offset' is only valid on a 'word' record");
  if (std::optional<int64_t> offset = getOffset(); offset && *offset < 0)
    return emitOpError("'offset' must be non-negative, got ") << *offset;

  if (std::optional<int64_t> size = getSize()) {
    if (*size <= 0)
      return emitOpError("'size' must be positive, got ") << *size;
    std::optional<int64_t> implied = getImpliedByteSize(type);
    if (implied && *implied != *size)
      return emitOpError("'size' (") << *size << " bytes) disagrees with the "
                                     << *implied << " bytes of " << type;
  }

  if (std::optional<ElementsAttr> value = getValue()) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      auto valueType = cast<ShapedType>(value->getType());
      if (valueType.getShape() != memref.getShape() ||
          valueType.getElementType() != memref.getElementType())
        return emitOpError("'value' of type ")
               << valueType << " does not match the shape and element type of "
               << type;
    }
    std::optional<int64_t> valueBytes = getValueByteSize(*value);
    std::optional<int64_t> objectBytes = getByteSize();
    if (valueBytes && objectBytes && *valueBytes != *objectBytes)
      return emitOpError("'value' holds ")
             << *valueBytes << " bytes but the object has " << *objectBytes;
  }

  if (std::optional<StringRef> shadowOf = getShadowOf();
      shadowOf && *shadowOf == getSymName())
    return emitOpError("cannot be its own shadow");

  // Keys identify host objects: two records of one symbol table must not
  // claim the same key. Report on the later record, naming the earlier one.
  if (Block *block = (*this)->getBlock()) {
    for (Operation &other : *block) {
      if (&other == getOperation())
        break;
      auto sibling = dyn_cast<GlobalOp>(other);
      if (sibling && sibling.getKey() == getKey())
        return emitOpError("key \"")
               << getKey() << "\" is already recorded by reloc.global @"
               << sibling.getSymName();
    }
  }
  return success();
}

LogicalResult GlobalOp::verifySymbolUses(SymbolTableCollection &table) {
  FlatSymbolRefAttr shadowOf = getShadowOfAttr();
  if (!shadowOf)
    return success();
  auto primal = dyn_cast_or_null<GlobalOp>(
      table.lookupNearestSymbolFrom(*this, shadowOf));
  if (!primal)
    return emitOpError("'shadow_of' ")
           << shadowOf << " does not name a reloc.global";
  if (primal.getGlobalType() != getGlobalType())
    return emitOpError("shadow type ")
           << getGlobalType() << " differs from the type "
           << primal.getGlobalType() << " of its primal " << shadowOf;
  if (primal.getShadowOf())
    return emitOpError("'shadow_of' ")
           << shadowOf << " names a record that is itself a shadow";
  return success();
}

//===----------------------------------------------------------------------===//
// Uses
//===----------------------------------------------------------------------===//

/// Resolves `op`'s global and checks that the use type equals its type.
template <typename OpTy>
static LogicalResult verifyUse(OpTy op, SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(op, op.getGlobalNameAttr());
  auto global = dyn_cast_or_null<GlobalOp>(symbol);
  if (!global)
    return op.emitOpError()
           << op.getGlobalNameAttr() << " does not reference a reloc.global";
  if (op.getType() != global.getGlobalType())
    return op.emitOpError("result type ")
           << op.getType() << " does not match the type "
           << global.getGlobalType() << " of reloc.global @"
           << global.getSymName();
  return success();
}

LogicalResult GetGlobalOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyUse(*this, table);
}

LogicalResult AddressOfOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyUse(*this, table);
}

#define GET_OP_CLASSES
#include "nabla/Dialect/Reloc/IR/RelocOps.cpp.inc"
