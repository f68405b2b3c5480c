//===- RecordShadows.cpp - Shadows of writable relocated objects ----------===//
//
// Finds the writable record behind a memref and pairs it with its shadow
// record. The shadow's name and key derive from the primal's, so generated
// derivatives stay deterministic.
//
//===----------------------------------------------------------------------===//

#include "RecordShadows.h"

#include "ActivityAnalysis.h"

using namespace mlir;
using namespace nabla;

reloc::GlobalOp RecordShadows::getWritableRecord(Value memref) {
  auto get = getViewSource(memref).getDefiningOp<reloc::GetGlobalOp>();
  if (!get)
    return {};
  auto record = SymbolTable::lookupNearestSymbolFrom<reloc::GlobalOp>(
      get, get.getGlobalNameAttr());
  auto type = dyn_cast<MemRefType>(get.getType());
  if (record && !record.getConstant() && !record.getShadowOf() && type &&
      isa<FloatType>(type.getElementType()))
    return record;
  return {};
}

Value RecordShadows::emitShadow(OpBuilder &builder, reloc::GetGlobalOp get) {
  auto record = symbols.lookup<reloc::GlobalOp>(get.getGlobalName());
  reloc::GlobalOp shadow;
  for (auto other : symbols.getOp()->getRegion(0).getOps<reloc::GlobalOp>())
    if (other.getShadowOf() == record.getSymName())
      shadow = other;
  if (!shadow) {
    OpBuilder at(record);
    at.setInsertionPointAfter(record);
    shadow = reloc::GlobalOp::create(
        at, record.getLoc(), (record.getSymName() + "_shadow").str(),
        record.getGlobalType(), (record.getKey() + "#shadow").str(),
        /*constant=*/false, record.getKind(), record.getOffsetAttr(),
        record.getSizeAttr(), ElementsAttr(), IntegerAttr(),
        FlatSymbolRefAttr::get(record.getSymNameAttr()));
    symbols.insert(shadow);
  }
  return reloc::GetGlobalOp::create(builder, get.getLoc(), get.getType(),
                                    shadow.getSymName());
}
