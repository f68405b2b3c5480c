//===- BitCounts.cpp - math.ctpop and math.cttz to SPIR-V -----------------===//
//
// Upstream's math-to-SPIR-V lowering has no pattern for math.ctpop or
// math.cttz (the raised `__popc(__ballot_sync(...))` and `__ffs` of CUDA):
// they were "failed to legalize". ctpop is OpBitCount; cttz is GLSL's
// FindILsb, which returns -1 for zero, where cttz returns the bit width.
// Vulkan's bit instructions take 32 bits, so 64-bit counts (`__popcll`,
// `__clzll`, `__ffsll`; upstream's ctlz pattern takes 32 bits too) combine
// the counts of the two halves.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"

using namespace mlir;

namespace {

/// math.ctpop → spirv.BitCount, on scalars the target has.
struct CountPopulation final : OpConversionPattern<math::CtPopOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(math::CtPopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type || !isa<IntegerType>(type) || type.isInteger(64))
      return rewriter.notifyMatchFailure(op, "not a converted integer");
    rewriter.replaceOpWithNewOp<spirv::BitCountOp>(op, type,
                                                   adaptor.getOperand());
    return success();
  }
};

/// math.cttz on i32 → x == 0 ? 32 : FindILsb(x).
struct CountTrailingZeros final
    : OpConversionPattern<math::CountTrailingZerosOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(math::CountTrailingZerosOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type || !type.isInteger(32))
      return rewriter.notifyMatchFailure(op, "FindILsb takes 32 bits");
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    Value zero = spirv::ConstantOp::create(rewriter, loc, type,
                                           rewriter.getI32IntegerAttr(0));
    Value width = spirv::ConstantOp::create(rewriter, loc, type,
                                            rewriter.getI32IntegerAttr(32));
    Value lowest = spirv::GLFindILsbOp::create(rewriter, loc, type, x);
    Value isZero = spirv::IEqualOp::create(rewriter, loc, x, zero);
    rewriter.replaceOpWithNewOp<spirv::SelectOp>(op, isZero, width, lowest);
    return success();
  }
};

/// The 32-bit halves of a 64-bit integer.
std::pair<Value, Value> splitHalves(OpBuilder &b, Location loc, Value x) {
  Type i32 = b.getI32Type();
  Value shift =
      spirv::ConstantOp::create(b, loc, x.getType(), b.getI64IntegerAttr(32));
  Value low = spirv::UConvertOp::create(b, loc, i32, x);
  Value high = spirv::UConvertOp::create(
      b, loc, i32, spirv::ShiftRightLogicalOp::create(b, loc, x, shift));
  return {low, high};
}

Value constantI32(OpBuilder &b, Location loc, int32_t v) {
  return spirv::ConstantOp::create(b, loc, b.getI32Type(),
                                   b.getI32IntegerAttr(v));
}

/// `v == 0 ? 32 : counted(v)` for 32-bit `v`.
template <typename Count>
Value unlessZero(OpBuilder &b, Location loc, Value v, Count counted) {
  Value isZero = spirv::IEqualOp::create(b, loc, v, constantI32(b, loc, 0));
  return spirv::SelectOp::create(b, loc, isZero, constantI32(b, loc, 32),
                                 counted(v));
}

/// math.ctpop, math.ctlz and math.cttz on i64: the halves' 32-bit counts
/// combined, the result widened back.
template <typename MathOp>
struct CountHalves final : OpConversionPattern<MathOp> {
  using OpConversionPattern<MathOp>::OpConversionPattern;
  using OpAdaptor = typename MathOp::Adaptor;

  LogicalResult
  matchAndRewrite(MathOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type || !type.isInteger(64))
      return rewriter.notifyMatchFailure(op, "not a 64-bit integer");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    auto [low, high] = splitHalves(rewriter, loc, adaptor.getOperand());
    auto lowest = [&](Value v) -> Value {
      return spirv::GLFindILsbOp::create(rewriter, loc, i32, v);
    };
    auto leading = [&](Value v) -> Value {
      return spirv::ISubOp::create(
          rewriter, loc, constantI32(rewriter, loc, 31),
          spirv::GLFindUMsbOp::create(rewriter, loc, i32, v));
    };
    Value thirtyTwo = constantI32(rewriter, loc, 32);
    Value count;
    if constexpr (std::is_same_v<MathOp, math::CtPopOp>) {
      count = spirv::IAddOp::create(
          rewriter, loc, spirv::BitCountOp::create(rewriter, loc, i32, low),
          spirv::BitCountOp::create(rewriter, loc, i32, high));
    } else {
      // cttz: the low half's, else 32 + the high half's; ctlz: the high
      // half's, else 32 + the low half's (32 for a zero half).
      bool trailing = std::is_same_v<MathOp, math::CountTrailingZerosOp>;
      Value first = trailing ? low : high, second = trailing ? high : low;
      auto counted = [&](Value v) {
        return trailing ? unlessZero(rewriter, loc, v, lowest)
                        : unlessZero(rewriter, loc, v, leading);
      };
      Value firstZero = spirv::IEqualOp::create(rewriter, loc, first,
                                                constantI32(rewriter, loc, 0));
      count = spirv::SelectOp::create(
          rewriter, loc, firstZero,
          spirv::IAddOp::create(rewriter, loc, thirtyTwo, counted(second)),
          counted(first));
    }
    rewriter.replaceOpWithNewOp<spirv::UConvertOp>(op, type, count);
    return success();
  }
};

} // namespace

void nabla::populateBitCountToSPIRVPatterns(
    const SPIRVTypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<CountPopulation, CountTrailingZeros, CountHalves<math::CtPopOp>,
               CountHalves<math::CountLeadingZerosOp>,
               CountHalves<math::CountTrailingZerosOp>>(typeConverter,
                                                        patterns.getContext());
}
