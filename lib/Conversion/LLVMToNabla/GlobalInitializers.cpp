//===- GlobalInitializers.cpp - Contents of raised module globals ---------===//
//
// The initial contents of an LLVM global as the elements of the memref the
// raise gives it: a number or an array of numbers (the importer's value
// attribute), or an initializer region of constants, zeros and insertvalues
// into arrays and structs. clang writes the latter for an array initialized
// in part (`float t[5000] = {...}` is a packed struct of the given elements
// and a zero array) and for arrays of structs of one scalar type.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace nabla::raise;

namespace {

/// Places the contents of `value` (of an initializer region), `offset` bytes
/// into the global, into `elements` (zeros where nothing is placed).
class InitializerReader {
public:
  InitializerReader(const DataLayout &layout, Type element,
                    SmallVectorImpl<Attribute> &elements)
      : layout(layout), element(element),
        elementBytes(getTypeSize(layout, element)), elements(elements) {}

  LogicalResult place(Value value, int64_t offset) {
    Operation *def = value.getDefiningOp();
    if (isa_and_nonnull<LLVM::ZeroOp, LLVM::UndefOp, LLVM::PoisonOp>(def))
      return success();
    if (auto constant = dyn_cast_or_null<LLVM::ConstantOp>(def)) {
      Attribute attr = constant.getValue();
      if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
        if (dense.getElementType() != element)
          return failure();
        int64_t k = 0;
        for (Attribute number : dense.getValues<Attribute>())
          if (failed(store(number, offset + elementBytes * k++)))
            return failure();
        return success();
      }
      if (isa<IntegerAttr, FloatAttr>(attr) &&
          cast<TypedAttr>(attr).getType() == element)
        return store(attr, offset);
      return failure();
    }
    if (auto insert = dyn_cast_or_null<LLVM::InsertValueOp>(def)) {
      std::optional<int64_t> at =
          offsetOf(insert.getContainer().getType(), insert.getPosition());
      if (!at || failed(place(insert.getContainer(), offset)))
        return failure();
      return place(insert.getValue(), offset + *at);
    }
    return failure();
  }

private:
  const DataLayout &layout;
  Type element;
  int64_t elementBytes;
  SmallVectorImpl<Attribute> &elements;

  LogicalResult store(Attribute number, int64_t offset) {
    if (offset % elementBytes ||
        offset / elementBytes >= static_cast<int64_t>(elements.size()))
      return failure();
    elements[offset / elementBytes] = number;
    return success();
  }

  /// The byte offset of the member at `position` of aggregate `type`.
  std::optional<int64_t> offsetOf(Type type, ArrayRef<int64_t> position) {
    int64_t offset = 0;
    for (int64_t index : position) {
      if (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
        type = array.getElementType();
        offset += index * getTypeSize(layout, type);
      } else if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
        if (index < 0 ||
            index >= static_cast<int64_t>(structType.getBody().size()))
          return std::nullopt;
        offset += getFieldOffset(layout, structType, index);
        type = structType.getBody()[index];
      } else {
        return std::nullopt;
      }
    }
    return offset;
  }
};

} // namespace

FailureOr<DenseElementsAttr>
nabla::raise::raiseGlobalInitializer(LLVM::GlobalOp global, MemRefType type) {
  auto tensor = RankedTensorType::get(type.getShape(), type.getElementType());
  if (Attribute value = global.getValueAttr()) {
    if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      if (dense.getElementType() != type.getElementType() ||
          dense.getNumElements() != type.getNumElements())
        return failure();
      return DenseElementsAttr::get(
          tensor, llvm::to_vector(dense.getValues<Attribute>()));
    }
    // A scalar `__device__` variable (a counter) with its initial value.
    if (isa<IntegerAttr, FloatAttr>(value) &&
        cast<TypedAttr>(value).getType() == type.getElementType() &&
        type.getNumElements() == 1)
      return DenseElementsAttr::get(tensor, value);
    return failure();
  }
  Block *block = global.getInitializerBlock();
  if (!block)
    return DenseElementsAttr();
  auto ret = dyn_cast<LLVM::ReturnOp>(block->getTerminator());
  if (!ret || ret.getNumOperands() != 1 ||
      !type.getElementType().isIntOrFloat())
    return failure();
  Builder builder(global.getContext());
  SmallVector<Attribute> elements(type.getNumElements(),
                                  builder.getZeroAttr(type.getElementType()));
  DataLayout layout = DataLayout::closest(global);
  InitializerReader reader(layout, type.getElementType(), elements);
  if (failed(reader.place(ret.getOperand(0), 0)))
    return failure();
  return DenseElementsAttr::get(tensor, elements);
}
