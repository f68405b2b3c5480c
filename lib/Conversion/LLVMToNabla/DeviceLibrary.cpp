//===- DeviceLibrary.cpp - Math calls and intrinsics to math/arith --------===//
//
// With `-nocudalib` / `-nogpulib` clang leaves the CUDA/HIP math functions as
// calls of the device libraries: `__nv_sinf` (libdevice), `__ocml_sin_f32`
// (OCML). These, the C names (`sinf`, `sin`) and LLVM's math intrinsics
// (`llvm.intr.sqrt`, ...) become the `math`/`arith` ops every target lowers
// and Nabla differentiates.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace nabla::raise;

namespace {
enum class MathFn {
  Sin,
  Cos,
  Tan,
  Exp,
  Exp2,
  Exp10,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Cbrt,
  Pow,
  Fabs,
  Floor,
  Ceil,
  Trunc,
  Round,
  Rint,
  Tanh,
  Sinh,
  Cosh,
  Atan,
  Atan2,
  Asin,
  Acos,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Erfc,
  Fma,
  Fmin,
  Fmax,
  Copysign,
  Powi,
};
} // namespace

/// The function a C math name stands for (`sinf` and `sin` alike).
static std::optional<MathFn> lookupMathName(StringRef name) {
  return llvm::StringSwitch<std::optional<MathFn>>(name)
      .Case("sin", MathFn::Sin)
      .Case("cos", MathFn::Cos)
      .Case("tan", MathFn::Tan)
      .Case("exp", MathFn::Exp)
      .Case("exp2", MathFn::Exp2)
      .Case("exp10", MathFn::Exp10)
      .Case("expm1", MathFn::Expm1)
      .Case("log", MathFn::Log)
      .Case("log2", MathFn::Log2)
      .Case("log10", MathFn::Log10)
      .Case("log1p", MathFn::Log1p)
      .Case("sqrt", MathFn::Sqrt)
      .Case("rsqrt", MathFn::Rsqrt)
      .Case("cbrt", MathFn::Cbrt)
      .Case("pow", MathFn::Pow)
      .Case("fabs", MathFn::Fabs)
      .Case("floor", MathFn::Floor)
      .Case("ceil", MathFn::Ceil)
      .Case("trunc", MathFn::Trunc)
      .Case("round", MathFn::Round)
      .Case("rint", MathFn::Rint)
      .Case("nearbyint", MathFn::Rint)
      .Case("tanh", MathFn::Tanh)
      .Case("sinh", MathFn::Sinh)
      .Case("cosh", MathFn::Cosh)
      .Case("atan", MathFn::Atan)
      .Case("atan2", MathFn::Atan2)
      .Case("asin", MathFn::Asin)
      .Case("acos", MathFn::Acos)
      .Case("asinh", MathFn::Asinh)
      .Case("acosh", MathFn::Acosh)
      .Case("atanh", MathFn::Atanh)
      .Case("erf", MathFn::Erf)
      .Case("erfc", MathFn::Erfc)
      .Case("fma", MathFn::Fma)
      .Case("fmin", MathFn::Fmin)
      .Case("fmax", MathFn::Fmax)
      .Case("copysign", MathFn::Copysign)
      .Case("powi", MathFn::Powi)
      .Default(std::nullopt);
}

/// The C name and float width a library symbol stands for: `__nv_sinf`
/// (f32), `__nv_sin` (f64), `__ocml_sin_f32`, `sinf`, `sin`.
static std::optional<std::pair<MathFn, unsigned>>
parseLibraryName(StringRef name) {
  StringRef base = name;
  std::optional<unsigned> width;
  if (base.consume_front("__ocml_")) {
    if (base.consume_back("_f32"))
      width = 32;
    else if (base.consume_back("_f64"))
      width = 64;
    else
      return std::nullopt;
    if (std::optional<MathFn> fn = lookupMathName(base))
      return std::make_pair(*fn, *width);
    return std::nullopt;
  }
  base.consume_front("__nv_");
  if (base.consume_front("fast_"))
    return std::nullopt;
  if (std::optional<MathFn> fn = lookupMathName(base))
    return std::make_pair(*fn, 64u);
  if (base.consume_back("f"))
    if (std::optional<MathFn> fn = lookupMathName(base))
      return std::make_pair(*fn, 32u);
  return std::nullopt;
}

/// Emits `fn` on `operands` (all of one float type, except the integer
/// exponent of powi).
static Value buildMath(OpBuilder &b, Location loc, MathFn fn,
                       ValueRange operands) {
  Value x = operands[0];
  Type type = x.getType();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  };
  switch (fn) {
  case MathFn::Sin:
    return math::SinOp::create(b, loc, x);
  case MathFn::Cos:
    return math::CosOp::create(b, loc, x);
  case MathFn::Tan:
    return math::TanOp::create(b, loc, x);
  case MathFn::Exp:
    return math::ExpOp::create(b, loc, x);
  case MathFn::Exp2:
    return math::Exp2Op::create(b, loc, x);
  case MathFn::Exp10:
    return math::ExpOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, constant(M_LN10)));
  case MathFn::Expm1:
    return math::ExpM1Op::create(b, loc, x);
  case MathFn::Log:
    return math::LogOp::create(b, loc, x);
  case MathFn::Log2:
    return math::Log2Op::create(b, loc, x);
  case MathFn::Log10:
    return math::Log10Op::create(b, loc, x);
  case MathFn::Log1p:
    return math::Log1pOp::create(b, loc, x);
  case MathFn::Sqrt:
    return math::SqrtOp::create(b, loc, x);
  case MathFn::Rsqrt:
    return math::RsqrtOp::create(b, loc, x);
  case MathFn::Cbrt:
    return math::CbrtOp::create(b, loc, x);
  case MathFn::Pow:
    return math::PowFOp::create(b, loc, x, operands[1]);
  case MathFn::Powi:
    return math::FPowIOp::create(b, loc, x, operands[1]);
  case MathFn::Fabs:
    return math::AbsFOp::create(b, loc, x);
  case MathFn::Floor:
    return math::FloorOp::create(b, loc, x);
  case MathFn::Ceil:
    return math::CeilOp::create(b, loc, x);
  case MathFn::Trunc:
    return math::TruncOp::create(b, loc, x);
  case MathFn::Round:
    return math::RoundOp::create(b, loc, x);
  case MathFn::Rint:
    return math::RoundEvenOp::create(b, loc, x);
  case MathFn::Tanh:
    return math::TanhOp::create(b, loc, x);
  case MathFn::Sinh:
    return math::SinhOp::create(b, loc, x);
  case MathFn::Cosh:
    return math::CoshOp::create(b, loc, x);
  case MathFn::Atan:
    return math::AtanOp::create(b, loc, x);
  case MathFn::Atan2:
    return math::Atan2Op::create(b, loc, x, operands[1]);
  case MathFn::Asin:
    return math::AsinOp::create(b, loc, x);
  case MathFn::Acos:
    return math::AcosOp::create(b, loc, x);
  case MathFn::Asinh:
    return math::AsinhOp::create(b, loc, x);
  case MathFn::Acosh:
    return math::AcoshOp::create(b, loc, x);
  case MathFn::Atanh:
    return math::AtanhOp::create(b, loc, x);
  case MathFn::Erf:
    return math::ErfOp::create(b, loc, x);
  case MathFn::Erfc:
    return math::ErfcOp::create(b, loc, x);
  case MathFn::Fma:
    return math::FmaOp::create(b, loc, x, operands[1], operands[2]);
  case MathFn::Fmin:
    return arith::MinNumFOp::create(b, loc, x, operands[1]);
  case MathFn::Fmax:
    return arith::MaxNumFOp::create(b, loc, x, operands[1]);
  case MathFn::Copysign:
    return math::CopySignOp::create(b, loc, x, operands[1]);
  }
  llvm_unreachable("unknown math function");
}

/// The number of operands of `fn`.
static unsigned getArity(MathFn fn) {
  switch (fn) {
  case MathFn::Pow:
  case MathFn::Powi:
  case MathFn::Atan2:
  case MathFn::Fmin:
  case MathFn::Fmax:
  case MathFn::Copysign:
    return 2;
  case MathFn::Fma:
    return 3;
  default:
    return 1;
  }
}

Value nabla::raise::buildDeviceLibraryCall(OpBuilder &builder, Location loc,
                                           StringRef name,
                                           ValueRange operands) {
  std::optional<std::pair<MathFn, unsigned>> parsed = parseLibraryName(name);
  if (!parsed || operands.size() != getArity(parsed->first) || operands.empty())
    return nullptr;
  auto type = dyn_cast<FloatType>(operands[0].getType());
  if (!type || type.getWidth() != parsed->second)
    return nullptr;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    bool exponent = parsed->first == MathFn::Powi && i == 1;
    if (exponent ? !operand.getType().isSignlessInteger(32)
                 : operand.getType() != type)
      return nullptr;
  }
  return buildMath(builder, loc, parsed->first, operands);
}

FailureOr<Value> nabla::raise::buildIntrinsic(OpBuilder &builder, Operation *op,
                                              ValueRange operands) {
  StringRef name = op->getName().getStringRef();
  if (!name.consume_front("llvm.intr."))
    return failure();
  Location loc = op->getLoc();
  if (op->getNumResults() != 1 || !op->getResult(0).getType().isIntOrFloat())
    return failure();
  if (isa<FloatType>(op->getResult(0).getType())) {
    std::optional<MathFn> fn = llvm::StringSwitch<std::optional<MathFn>>(name)
                                   .Case("fabs", MathFn::Fabs)
                                   .Case("fmuladd", MathFn::Fma)
                                   .Case("minnum", MathFn::Fmin)
                                   .Case("maxnum", MathFn::Fmax)
                                   .Case("ceil", MathFn::Ceil)
                                   .Case("trunc", MathFn::Trunc)
                                   .Case("roundeven", MathFn::Rint)
                                   .Default(lookupMathName(name));
    if (name == "minimum")
      return Value(
          arith::MinimumFOp::create(builder, loc, operands[0], operands[1]));
    if (name == "maximum")
      return Value(
          arith::MaximumFOp::create(builder, loc, operands[0], operands[1]));
    if (!fn || operands.size() != getArity(*fn))
      return failure();
    return buildMath(builder, loc, *fn, operands);
  }
  if (name == "smax")
    return Value(
        arith::MaxSIOp::create(builder, loc, operands[0], operands[1]));
  if (name == "smin")
    return Value(
        arith::MinSIOp::create(builder, loc, operands[0], operands[1]));
  if (name == "umax")
    return Value(
        arith::MaxUIOp::create(builder, loc, operands[0], operands[1]));
  if (name == "umin")
    return Value(
        arith::MinUIOp::create(builder, loc, operands[0], operands[1]));
  if (name == "abs")
    return Value(math::AbsIOp::create(builder, loc, operands[0]));
  if (name == "ctlz")
    return Value(math::CountLeadingZerosOp::create(builder, loc, operands[0]));
  if (name == "cttz")
    return Value(math::CountTrailingZerosOp::create(builder, loc, operands[0]));
  if (name == "ctpop")
    return Value(math::CtPopOp::create(builder, loc, operands[0]));
  return failure();
}
