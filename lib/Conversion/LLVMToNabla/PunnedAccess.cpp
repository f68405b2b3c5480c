//===- PunnedAccess.cpp - Accesses of another type than the object's -----===//
//
// An object accessed as several scalar types is viewed as the one
// mergeAccessTypes picks (PlanModule.cpp): the float of one width, or the
// integer of the narrowest. An access of another type is then rewritten:
// one of the same width reinterprets the element (arith.bitcast); a wider
// one reads or writes consecutive elements, least significant first (the
// little-endian layout every GPU target has), joined with shifts and ors or
// split with shifts and truncations. The AD follows floats through the
// bitcasts where it can and refuses where it cannot (FloatBits.cpp); atomics
// of another type are a located error.
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace nabla::raise;

/// The integer type of `type`'s width.
static IntegerType bitsOf(Type type) {
  return IntegerType::get(type.getContext(), type.getIntOrFloatBitWidth());
}

static Value reinterpret(OpBuilder &b, Location loc, Value v, Type type) {
  return v.getType() == type ? v : arith::BitcastOp::create(b, loc, type, v);
}

Value FunctionRaiser::loadAs(Location loc, Value memref, Value index,
                             Type type) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  if (element == type)
    return memref::LoadOp::create(builder, loc, memref, ValueRange{index});
  unsigned width = type.getIntOrFloatBitWidth();
  unsigned elementWidth = element.getIntOrFloatBitWidth();
  if (width == elementWidth)
    return reinterpret(
        builder, loc,
        memref::LoadOp::create(builder, loc, memref, ValueRange{index}), type);
  IntegerType wide = bitsOf(type);
  Value result;
  for (unsigned k = 0; k < width / elementWidth; ++k) {
    Value at =
        k ? arith::AddIOp::create(builder, loc, index, indexConstant(loc, k))
                .getResult()
          : index;
    Value part = reinterpret(
        builder, loc,
        memref::LoadOp::create(builder, loc, memref, ValueRange{at}),
        bitsOf(element));
    Value extended = arith::ExtUIOp::create(builder, loc, wide, part);
    if (k)
      extended = arith::ShLIOp::create(
          builder, loc, extended,
          arith::ConstantIntOp::create(builder, loc, wide, k * elementWidth));
    result =
        result
            ? arith::OrIOp::create(builder, loc, result, extended).getResult()
            : extended;
  }
  return reinterpret(builder, loc, result, type);
}

void FunctionRaiser::storeAs(Location loc, Value value, Value memref,
                             Value index) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  Type type = value.getType();
  if (element == type) {
    memref::StoreOp::create(builder, loc, value, memref, ValueRange{index});
    return;
  }
  unsigned width = type.getIntOrFloatBitWidth();
  unsigned elementWidth = element.getIntOrFloatBitWidth();
  if (width == elementWidth) {
    memref::StoreOp::create(builder, loc,
                            reinterpret(builder, loc, value, element), memref,
                            ValueRange{index});
    return;
  }
  IntegerType wide = bitsOf(type);
  Value bits = reinterpret(builder, loc, value, wide);
  for (unsigned k = 0; k < width / elementWidth; ++k) {
    Value shifted =
        k ? arith::ShRUIOp::create(builder, loc, bits,
                                   arith::ConstantIntOp::create(
                                       builder, loc, wide, k * elementWidth))
                .getResult()
          : bits;
    Value part =
        arith::TruncIOp::create(builder, loc, bitsOf(element), shifted);
    Value at =
        k ? arith::AddIOp::create(builder, loc, index, indexConstant(loc, k))
                .getResult()
          : index;
    memref::StoreOp::create(builder, loc,
                            reinterpret(builder, loc, part, element), memref,
                            ValueRange{at});
  }
}
