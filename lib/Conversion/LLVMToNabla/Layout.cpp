//===- Layout.cpp - Sizes, fields and memref types of raised objects ------===//
//
// The data-layout side of the raise: type sizes and struct field offsets
// (ABI alignment), the scalar leaves of byval and by-value structs, AMDGPU
// launch-data fields, and the memref type each root becomes.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

using namespace mlir;
using namespace nabla::raise;

std::optional<DispatchField>
nabla::raise::getDispatchField(unsigned table, int64_t offset, Type type) {
  unsigned width = type.isInteger() ? type.getIntOrFloatBitWidth() : 0;
  if (table == 0) { // implicit kernel arguments, code object v5
    if (width == 16 && (offset == 12 || offset == 14 || offset == 16))
      return DispatchField{false, unsigned((offset - 12) / 2), false};
    if (width == 32 && (offset == 0 || offset == 4 || offset == 8))
      return DispatchField{true, unsigned(offset / 4), false};
    return std::nullopt;
  }
  // hsa_kernel_dispatch_packet_t
  if (width == 16 && (offset == 4 || offset == 6 || offset == 8))
    return DispatchField{false, unsigned((offset - 4) / 2), false};
  if (width == 32 && (offset == 12 || offset == 16 || offset == 20))
    return DispatchField{true, unsigned((offset - 12) / 4), true};
  return std::nullopt;
}

int64_t nabla::raise::getTypeSize(const DataLayout &layout, Type type) {
  return static_cast<int64_t>(layout.getTypeSize(type).getFixedValue());
}

int64_t nabla::raise::getFieldOffset(const DataLayout &layout,
                                     LLVM::LLVMStructType type,
                                     unsigned index) {
  int64_t offset = 0;
  for (auto [k, field] : llvm::enumerate(type.getBody())) {
    if (!type.isPacked())
      offset = llvm::alignTo(offset, layout.getTypeABIAlignment(field));
    if (k == index)
      break;
    offset += getTypeSize(layout, field);
  }
  return offset;
}

/// Appends the scalar leaves of `type` at `base` to `leaves`.
static void collectLeaves(const DataLayout &layout, Type type, int64_t base,
                          SmallVectorImpl<std::pair<int64_t, Type>> &leaves) {
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
    for (auto [k, field] : llvm::enumerate(structType.getBody()))
      collectLeaves(layout, field, base + getFieldOffset(layout, structType, k),
                    leaves);
    return;
  }
  if (auto arrayType = dyn_cast<LLVM::LLVMArrayType>(type)) {
    int64_t size = getTypeSize(layout, arrayType.getElementType());
    for (unsigned i = 0, e = arrayType.getNumElements(); i < e; ++i)
      collectLeaves(layout, arrayType.getElementType(), base + i * size,
                    leaves);
    return;
  }
  leaves.emplace_back(base, type);
}

static void collectFields(Type type, SmallVectorImpl<int64_t> &prefix,
                          AggregateFields &fields) {
  auto recurse = [&](int64_t i, Type element) {
    prefix.push_back(i);
    collectFields(element, prefix, fields);
    prefix.pop_back();
  };
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
    for (auto [i, field] : llvm::enumerate(structType.getBody()))
      recurse(i, field);
    return;
  }
  if (auto arrayType = dyn_cast<LLVM::LLVMArrayType>(type)) {
    for (unsigned i = 0; i < arrayType.getNumElements(); ++i)
      recurse(i, arrayType.getElementType());
    return;
  }
  fields.push_back({SmallVector<int64_t>(prefix.begin(), prefix.end()), type});
}

AggregateFields nabla::raise::getAggregateFields(Type type) {
  SmallVector<int64_t> prefix;
  AggregateFields fields;
  collectFields(type, prefix, fields);
  return fields;
}

std::optional<std::pair<int64_t, Type>>
nabla::raise::getAggregateLeaf(const DataLayout &layout, Type type,
                               ArrayRef<int64_t> position) {
  int64_t offset = 0;
  for (int64_t index : position) {
    if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
      if (index < 0 || index >= int64_t(structType.getBody().size()))
        return std::nullopt;
      offset += getFieldOffset(layout, structType, index);
      type = structType.getBody()[index];
    } else if (auto arrayType = dyn_cast<LLVM::LLVMArrayType>(type)) {
      if (index < 0 || index >= int64_t(arrayType.getNumElements()))
        return std::nullopt;
      type = arrayType.getElementType();
      offset += index * getTypeSize(layout, type);
    } else {
      return std::nullopt;
    }
  }
  return std::make_pair(offset, type);
}

std::string nabla::raise::getAddressGlobalName(StringRef address) {
  return ("__nabla_address_" + address).str();
}

SmallVector<std::pair<int64_t, Type>>
nabla::raise::getStructLeaves(const DataLayout &layout, Type type) {
  SmallVector<std::pair<int64_t, Type>> leaves;
  collectLeaves(layout, type, 0, leaves);
  return leaves;
}

SmallVector<std::pair<int64_t, Type>>
nabla::raise::getCoveredLeaves(const DataLayout &layout, Type type,
                               int64_t offset, Type loaded) {
  auto integer = dyn_cast<IntegerType>(loaded);
  if (!integer || integer.getWidth() % 8)
    return {};
  int64_t end = offset + integer.getWidth() / 8, at = offset;
  SmallVector<std::pair<int64_t, Type>> covered;
  for (auto [leafOffset, leaf] : getStructLeaves(layout, type)) {
    if (leafOffset < at)
      continue;
    if (leafOffset != at || !leaf.isIntOrFloat() ||
        leaf.getIntOrFloatBitWidth() % 8)
      break;
    covered.push_back({leafOffset, leaf});
    at += leaf.getIntOrFloatBitWidth() / 8;
    if (at >= end)
      break;
  }
  if (at != end || covered.size() < 2)
    return {};
  return covered;
}

bool nabla::raise::isDynamicSharedGlobal(LLVM::GlobalOp global) {
  auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
  return global.getAddrSpace() == 3 && array && array.getNumElements() == 0 &&
         !global.getInitializerRegion().getBlocks().size() &&
         !global.getValueOrNull();
}

MemRefType nabla::raise::getSlotType(const ModulePlan &module,
                                     const SharedSlot &slot) {
  LLVM::GlobalOp global = module.lookupGlobal(slot.global);
  DataLayout layout = DataLayout::closest(global);
  Type element = module.globalElementTypes.lookup(slot.global);
  if (!element)
    element = IntegerType::get(global.getContext(), 8);
  // `extern __shared__ T s[]`: sized by the launch (dynamic shared memory).
  int64_t count = isDynamicSharedGlobal(global)
                      ? ShapedType::kDynamic
                      : int64_t(getTypeSize(layout, global.getGlobalType()) /
                                getTypeSize(layout, element));
  return MemRefType::get(
      {count}, element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(global.getContext(),
                                 gpu::AddressSpace::Workgroup));
}

MemRefType nabla::raise::getRootMemRefType(const ModulePlan &module,
                                           const FunctionPlan &plan,
                                           unsigned root) {
  const Root &r = plan.roots[root];
  Type element = plan.getElementType(root);
  switch (r.kind) {
  case Root::Shared:
    return getSlotType(module, {r.global, false});
  case Root::HostGlobal: {
    LLVM::GlobalOp global = module.lookupGlobal(r.global);
    DataLayout layout = DataLayout::closest(global);
    if (Type known = module.globalElementTypes.lookup(r.global))
      element = known;
    int64_t count = getTypeSize(layout, global.getGlobalType()) /
                    getTypeSize(layout, element);
    return MemRefType::get({count}, element);
  }
  case Root::Address: {
    auto sizes =
        module.module->getAttrOfType<DictionaryAttr>("nabla.address_sizes");
    StringRef address =
        r.global.getValue().drop_front(getAddressGlobalName("").size());
    auto bytes = sizes ? sizes.getAs<IntegerAttr>(address) : IntegerAttr();
    DataLayout layout = DataLayout::closest(plan.func);
    if (Type known = module.globalElementTypes.lookup(r.global))
      element = known;
    int64_t count = bytes ? bytes.getInt() / getTypeSize(layout, element) : 0;
    return MemRefType::get({count}, element);
  }
  case Root::Alloca: {
    auto alloca = cast<LLVM::AllocaOp>(r.op);
    DataLayout layout = DataLayout::closest(alloca);
    int64_t count = getTypeSize(layout, alloca.getElemType());
    if (auto constant = alloca.getArraySize().getDefiningOp<LLVM::ConstantOp>())
      if (auto size = dyn_cast<IntegerAttr>(constant.getValue()))
        count *= size.getInt();
    return MemRefType::get({count / getTypeSize(layout, element)}, element);
  }
  default:
    return MemRefType::get({ShapedType::kDynamic}, element);
  }
}
