//===- MemoryIntrinsics.cpp - memset and memcpy as element loops ----------===//
//
// clang zero-initialises local arrays (`float acc[8] = {}`) with
// llvm.memset and copies structs and arrays with llvm.memcpy. Once the
// objects are memrefs of a known element type, each becomes an scf.for over
// the elements the byte count covers: stores of the byte pattern's value of
// the element type (memset), loads and stores (memcpy, also when the two
// objects' element types differ but have one width). A length that is not
// a whole number of elements, or a copy between elements of different
// widths, is a located error. memmove copies like memcpy, from the last
// element down when it moves a range of one object to a later place, so
// that overlapping ranges copy as they should.
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace nabla::raise;

/// The element type's size in bytes (at least one).
static int64_t elementBytes(Value memref) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

FailureOr<bool> FunctionRaiser::raiseMemoryIntrinsic(Operation *op) {
  auto memset = dyn_cast<LLVM::MemsetOp>(op);
  auto memcpy = dyn_cast<LLVM::MemcpyOp>(op);
  auto memmove = dyn_cast<LLVM::MemmoveOp>(op);
  if (!memset && !memcpy && !memmove)
    return false;
  Location loc = plainLoc(op->getLoc());
  Value dstPointer = memset   ? memset.getDst()
                     : memcpy ? memcpy.getDst()
                              : memmove.getDst();
  Value lengthValue = memset   ? memset.getLen()
                      : memcpy ? memcpy.getLen()
                               : memmove.getLen();
  Value srcPointer = memcpy    ? memcpy.getSrc()
                     : memmove ? memmove.getSrc()
                               : Value();
  FailureOr<std::pair<Value, Value>> dst = lookupPointer(op, dstPointer);
  if (failed(dst))
    return failure();
  Value length = lookup(op, lengthValue);
  if (!length)
    return failure();
  int64_t bytes = elementBytes(dst->first);
  Type element = cast<MemRefType>(dst->first.getType()).getElementType();
  FailureOr<std::pair<Value, Value>> src;
  if (srcPointer) {
    src = lookupPointer(op, srcPointer);
    if (failed(src))
      return failure();
    if (elementBytes(src->first) != bytes)
      return fail(op) << "cannot raise a copy between objects of "
                      << cast<MemRefType>(src->first.getType()).getElementType()
                      << " and " << element << " elements";
  }
  APInt constantLength;
  if (matchPattern(lengthValue, m_ConstantInt(&constantLength)) &&
      constantLength.getSExtValue() % bytes != 0)
    return fail(op) << "cannot raise a "
                    << (memset   ? "memset"
                        : memcpy ? "memcpy"
                                 : "memmove")
                    << " of " << constantLength.getSExtValue()
                    << " bytes: not a whole number of " << element
                    << " elements";
  // The value memset stores: its byte repeated over the element.
  Value fill;
  if (memset) {
    APInt byte;
    Value value = lookup(op, memset.getVal());
    if (!value)
      return failure();
    unsigned width = element.getIntOrFloatBitWidth();
    IntegerType bits = builder.getIntegerType(width);
    if (matchPattern(memset.getVal(), m_ConstantInt(&byte))) {
      APInt pattern = APInt::getSplat(width, byte.zextOrTrunc(8));
      fill = arith::ConstantOp::create(builder, loc,
                                       builder.getIntegerAttr(bits, pattern));
    } else {
      // A run-time byte: or it into every byte of the element.
      Value wide =
          width == 8 ? value
                     : Value(arith::ExtUIOp::create(builder, loc, bits, value));
      fill = wide;
      for (unsigned shift = 8; shift < width; shift += 8)
        fill = arith::OrIOp::create(
            builder, loc, fill,
            arith::ShLIOp::create(
                builder, loc, wide,
                arith::ConstantOp::create(
                    builder, loc, builder.getIntegerAttr(bits, shift))));
    }
    if (fill.getType() != element)
      fill = arith::BitcastOp::create(builder, loc, element, fill);
  }
  Value count = arith::DivUIOp::create(builder, loc, toIndex(loc, length),
                                       indexConstant(loc, bytes));
  // memmove within one object to a later place: from the last element down.
  Value backward;
  if (memmove && src->first == dst->first)
    backward = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ugt,
                                     dst->second, src->second);
  auto loop = scf::ForOp::create(builder, loc, indexConstant(loc, 0), count,
                                 indexConstant(loc, 1));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(loop.getBody());
  Value k = loop.getInductionVar();
  if (backward) {
    Value last = arith::SubIOp::create(
        builder, loc, arith::SubIOp::create(builder, loc, count, k),
        indexConstant(loc, 1));
    k = arith::SelectOp::create(builder, loc, backward, last, k);
  }
  Value at = arith::AddIOp::create(builder, loc, dst->second, k);
  if (memset) {
    memref::StoreOp::create(builder, loc, fill, dst->first, ValueRange{at});
  } else {
    Value from = arith::AddIOp::create(builder, loc, src->second, k);
    Value value = loadAs(loc, src->first, from, element);
    memref::StoreOp::create(builder, loc, value, dst->first, ValueRange{at});
  }
  return true;
}
