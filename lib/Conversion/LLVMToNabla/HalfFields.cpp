//===- HalfFields.cpp - 16-bit fields of packed integers ------------------===//
//
// Joins and splits of halves packed into wider integers (HalfFields.h).
//
//===----------------------------------------------------------------------===//

#include "HalfFields.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

IntegerType nabla::raise::packedHalvesType(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer || integer.getWidth() <= 16 || integer.getWidth() % 16 ||
      integer.getWidth() > 64)
    return {};
  return integer;
}

static Value constant(OpBuilder &b, Location loc, Type type, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

Value nabla::raise::joinHalves(OpBuilder &b, Location loc, IntegerType type,
                               ArrayRef<Value> fields) {
  Value joined;
  for (auto [k, field] : llvm::enumerate(fields)) {
    Value wide = LLVM::ZExtOp::create(b, loc, type, field);
    if (k)
      wide = LLVM::ShlOp::create(b, loc, wide, constant(b, loc, type, 16 * k));
    joined = joined ? Value(LLVM::OrOp::create(b, loc, joined, wide)) : wide;
  }
  return joined;
}

Value nabla::raise::extractHalf(OpBuilder &b, Location loc, Value wide,
                                unsigned k) {
  if (k)
    wide = LLVM::LShrOp::create(b, loc, wide,
                                constant(b, loc, wide.getType(), 16 * k));
  return LLVM::TruncOp::create(b, loc, b.getI16Type(), wide);
}

LogicalResult
nabla::raise::matchJoinedHalves(Value wide, SmallVectorImpl<Value> &fields) {
  IntegerType type = packedHalvesType(wide.getType());
  if (!type)
    return failure();
  fields.assign(type.getWidth() / 16, Value());
  SmallVector<Value> work{wide};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto orOp = v.getDefiningOp<LLVM::OrOp>()) {
      work.append({orOp.getLhs(), orOp.getRhs()});
      continue;
    }
    unsigned k = 0;
    if (auto shl = v.getDefiningOp<LLVM::ShlOp>()) {
      APInt amount;
      if (!matchPattern(shl.getRhs(), m_ConstantInt(&amount)) ||
          amount.urem(16) || amount.uge(type.getWidth()))
        return failure();
      k = amount.getZExtValue() / 16;
      v = shl.getLhs();
    }
    auto ext = v.getDefiningOp<LLVM::ZExtOp>();
    if (!ext || !ext.getArg().getType().isInteger(16) || fields[k])
      return failure();
    fields[k] = ext.getArg();
  }
  return success(llvm::all_of(fields, [](Value f) { return bool(f); }));
}

std::optional<std::pair<Value, unsigned>>
nabla::raise::extractedHalf(Value bits) {
  auto trunc = bits.getDefiningOp<LLVM::TruncOp>();
  if (!trunc || !trunc.getType().isInteger(16))
    return std::nullopt;
  Value wide = trunc.getArg();
  unsigned k = 0;
  if (auto shift = wide.getDefiningOp<LLVM::LShrOp>()) {
    APInt amount;
    if (!matchPattern(shift.getRhs(), m_ConstantInt(&amount)) ||
        amount.urem(16))
      return std::nullopt;
    k = amount.getZExtValue() / 16;
    wide = shift.getLhs();
  }
  IntegerType type = packedHalvesType(wide.getType());
  if (!type || 16 * k >= type.getWidth())
    return std::nullopt;
  return std::make_pair(wide, k);
}
