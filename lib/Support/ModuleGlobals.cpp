//===- ModuleGlobals.cpp - Module globals the runtime owns ----------------===//

#include "nabla/Support/ModuleGlobals.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Bytes of one element of `type` in a storage buffer.
static unsigned elementBytes(Type type) {
  return std::max(1u, (type.getIntOrFloatBitWidth() + 7) / 8);
}

/// `value`'s elements as little-endian bytes, two hex digits each.
static std::string hexBytes(ElementsAttr value, unsigned bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(value.getNumElements() * bytes * 2);
  for (Attribute element : value.getValues<Attribute>()) {
    APInt bits;
    if (auto number = dyn_cast<FloatAttr>(element))
      bits = number.getValue().bitcastToAPInt();
    else
      bits = cast<IntegerAttr>(element).getValue();
    for (unsigned k = 0; k < bytes; ++k) {
      uint64_t byte = k * 8 < bits.getBitWidth()
                          ? bits.extractBitsAsZExtValue(
                                std::min(8u, bits.getBitWidth() - k * 8), k * 8)
                          : 0;
      text.push_back(digits[byte >> 4]);
      text.push_back(digits[byte & 15]);
    }
  }
  return text;
}

/// True if every element of `value` is zero.
static bool isZero(ElementsAttr value) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || !dense.isSplat())
    return false;
  Attribute element = dense.getSplatValue<Attribute>();
  if (auto number = dyn_cast<FloatAttr>(element))
    return number.getValue().isPosZero();
  return cast<IntegerAttr>(element).getValue().isZero();
}

llvm::json::Object nabla::describeModuleGlobals(DictionaryAttr info) {
  llvm::json::Array buffers;
  if (auto list = info.getAs<ArrayAttr>("buffers"))
    for (auto global : list.getAsRange<DictionaryAttr>()) {
      auto type = cast<MemRefType>(global.getAs<TypeAttr>("type").getValue());
      Type element = type.getElementType();
      unsigned bytes = elementBytes(element);
      std::string elementName;
      llvm::raw_string_ostream(elementName) << element;
      llvm::json::Object buffer{
          {"name", global.getAs<StringAttr>("name").getValue()},
          {"element", elementName},
          {"count", type.getNumElements()},
          {"bytes", type.getNumElements() * int64_t(bytes)},
          {"constant", static_cast<bool>(global.get("constant"))}};
      if (auto value = global.getAs<ElementsAttr>("value"))
        if (!isZero(value))
          buffer["data"] = hexBytes(value, bytes);
      buffers.push_back(std::move(buffer));
    }
  llvm::json::Object kernels;
  if (auto map = info.getAs<DictionaryAttr>("kernels"))
    for (NamedAttribute kernel : map) {
      llvm::json::Array names;
      for (StringRef name :
           cast<ArrayAttr>(kernel.getValue()).getAsValueRange<StringAttr>())
        names.push_back(name);
      kernels[kernel.getName().getValue()] = std::move(names);
    }
  return llvm::json::Object{{"buffers", std::move(buffers)},
                            {"kernels", std::move(kernels)}};
}
