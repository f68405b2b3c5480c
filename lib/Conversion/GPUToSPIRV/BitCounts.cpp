//===- BitCounts.cpp - math.ctpop and math.cttz to SPIR-V -----------------===//
//
// Upstream's math-to-SPIR-V lowering has no pattern for math.ctpop or
// math.cttz (the raised `__popc(__ballot_sync(...))` and `__ffs` of CUDA):
// they were "failed to legalize". ctpop is OpBitCount; cttz is GLSL's
// FindILsb, which returns -1 for zero, where cttz returns the bit width.
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
    if (!type || !isa<IntegerType>(type))
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

} // namespace

void nabla::populateBitCountToSPIRVPatterns(
    const SPIRVTypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<CountPopulation, CountTrailingZeros>(typeConverter,
                                                    patterns.getContext());
}
