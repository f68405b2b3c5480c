//===- AccurateArctangent.cpp - f32 math.atan and math.atan2 to ~3 ulp ----===//
//
// GLSL.std.450 Atan on lavapipe and upstream's polynomial approximation of
// atan2 are both off by up to 2e-5 relative (~350 ulp; Vulkan allows 4096),
// which a loop multiplying the result amplifies past any useful tolerance
// (found by difftest, seed 62486: atan2 in a loop scaling by 4 per trip).
// CUDA's atanf/atan2f are within 2-3 ulp; so are these expansions, measured
// on lavapipe (test_math_accuracy.py):
//
//   atan(x):     a = |x|; t = a > 1 ? 1/a : a;   r = atan01(t)
//                r = a > 1 ? pi/2 - r : r;        copysign(r, x)
//   atan2(y, x): t = min(|x|,|y|) / max(|x|,|y|)  (0 when both are 0, 1 when
//                both are infinite);  r = atan01(t)
//                r = |y| > |x| ? pi/2 - r : r;  r = signbit(x) ? pi - r : r
//                copysign(r, y)
//   atan01(t), t in [0, 1]: u = t > tan(pi/8) ? (t - 1)/(t + 1) : t, so
//                |u| <= tan(pi/8);  p = u + u^3 P(u^2);  t > tan(pi/8) ? pi/4 +
//                p : p
//
// P is a degree-4 polynomial fitted here (weighted least squares in relative
// error on Chebyshev nodes of [0, tan(pi/8)], coefficients rounded to f32).
// NaN propagates through every step; the IEEE special cases of atan2 (signed
// zeros, infinities) come out as libm's. f64 atan/atan2 stay a located error
// on SPIR-V (nabla-check-target-support: GLSL.std.450 is 32-bit).
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace {
/// The coefficients of P, lowest degree first.
constexpr float kAtanCoefficients[] = {-0.33333316f, 0.19998531f, -0.14244486f,
                                       0.10600013f, -0.06092337f};
constexpr double kTanPiOver8 = 0.41421356237309503;

/// Builds f32 scalar or vector arithmetic of one type at one location.
class Builder {
public:
  Builder(PatternRewriter &rewriter, Location loc, Type type)
      : b(rewriter), loc(loc), type(type) {}

  Value cst(double value) {
    FloatAttr scalar = b.getF32FloatAttr(static_cast<float>(value));
    TypedAttr attr = scalar;
    if (auto shaped = dyn_cast<ShapedType>(type))
      attr = SplatElementsAttr::get(shaped, scalar);
    return arith::ConstantOp::create(b, loc, type, attr);
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value abs(Value x) { return math::AbsFOp::create(b, loc, x); }
  Value gt(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value copySign(Value magnitude, Value sign) {
    return math::CopySignOp::create(b, loc, magnitude, sign);
  }
  /// True where x's sign bit is set (-0.0 included, unlike x < 0).
  Value signBit(Value x) {
    Type intType = b.getI32Type();
    if (auto shaped = dyn_cast<ShapedType>(type))
      intType = shaped.clone(intType);
    Value bits = arith::BitcastOp::create(b, loc, intType, x);
    Value zero =
        arith::ConstantOp::create(b, loc, intType, b.getZeroAttr(intType));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, bits, zero);
  }

  /// atan(t) for t in [0, 1] (or NaN).
  Value atanUnit(Value t) {
    Value one = cst(1.0);
    Value reduce = gt(t, cst(kTanPiOver8));
    Value u = select(reduce, div(sub(t, one), add(t, one)), t);
    Value z = mul(u, u);
    Value p = cst(kAtanCoefficients[std::size(kAtanCoefficients) - 1]);
    for (int i = std::size(kAtanCoefficients) - 2; i >= 0; --i)
      p = add(mul(p, z), cst(kAtanCoefficients[i]));
    Value r = add(u, mul(mul(u, z), p));
    return select(reduce, add(cst(M_PI / 4), r), r);
  }

private:
  PatternRewriter &b;
  Location loc;
  Type type;
};

bool isF32(Type type) { return getElementTypeOrSelf(type).isF32(); }

struct AccurateAtan : public OpRewritePattern<math::AtanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::AtanOp op,
                                PatternRewriter &rewriter) const override {
    if (!isF32(op.getType()))
      return failure();
    Builder b(rewriter, op.getLoc(), op.getType());
    Value x = op.getOperand();
    Value a = b.abs(x);
    Value invert = b.gt(a, b.cst(1.0));
    Value r = b.atanUnit(b.select(invert, b.div(b.cst(1.0), a), a));
    r = b.select(invert, b.sub(b.cst(M_PI / 2), r), r);
    rewriter.replaceOp(op, b.copySign(r, x));
    return success();
  }
};

struct AccurateAtan2 : public OpRewritePattern<math::Atan2Op> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::Atan2Op op,
                                PatternRewriter &rewriter) const override {
    if (!isF32(op.getType()))
      return failure();
    Builder b(rewriter, op.getLoc(), op.getType());
    Value y = op.getLhs(), x = op.getRhs();
    Value ax = b.abs(x), ay = b.abs(y);
    Value hi = arith::MaximumFOp::create(rewriter, op.getLoc(), ax, ay);
    Value lo = arith::MinimumFOp::create(rewriter, op.getLoc(), ax, ay);
    Value t = b.div(lo, hi);
    // 0/0 and inf/inf: atan2(±0, ±0) and atan2(±inf, ±inf).
    t = b.select(b.eq(hi, b.cst(0.0)), b.cst(0.0), t);
    Value inf = b.cst(INFINITY);
    Value bothInfinite = arith::AndIOp::create(rewriter, op.getLoc(),
                                               b.eq(ax, inf), b.eq(ay, inf));
    t = b.select(bothInfinite, b.cst(1.0), t);
    Value r = b.atanUnit(t);
    r = b.select(b.gt(ay, ax), b.sub(b.cst(M_PI / 2), r), r);
    r = b.select(b.signBit(x), b.sub(b.cst(M_PI), r), r);
    rewriter.replaceOp(op, b.copySign(r, y));
    return success();
  }
};
} // namespace

void nabla::populateAccurateArctangentPatterns(RewritePatternSet &patterns) {
  patterns.add<AccurateAtan, AccurateAtan2>(patterns.getContext());
}
