//===- DeviceLibrary.cpp - Math calls and intrinsics to math/arith --------===//
//
// With `-nocudalib` / `-nogpulib` clang leaves the CUDA/HIP math functions as
// calls of the device libraries: `__nv_sinf` (libdevice), `__ocml_sin_f32`
// (OCML). These, the C names (`sinf`, `sin`) and LLVM's math intrinsics
// (`llvm.intr.sqrt`, ...) become the `math`/`arith` ops every target lowers
// and Nabla differentiates; libdevice's reinterpretations (`__nv_float_as_int`
// and friends) become bitcasts, its integer functions (`__nv_umin`,
// `__nv_mul24`, `__nv_ffs`, ...) and rounding-mode or fast variants
// (`__nv_fmul_rn`, `__nv_fast_expf`, `__nv_saturatef`) arith and math ops.
// Before the raise, the sine-and-cosine functions that return through
// pointers (`sincosf(x, &s, &c)`: `__nv_sincosf`, `__nv_fast_sincosf`,
// `__nv_sincos`, the `sincospi` forms, OCML's `__ocml_sincos_f32` returning
// the sine and storing the cosine, LLVM's `llvm.sincos`) become a sine, a
// cosine and plain stores, which the raise follows like any other.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// What `lookup` makes of the C name a library symbol stands for, and the
/// float width: `__nv_sinf` (f32), `__nv_sin` (f64), `__ocml_sin_f32`,
/// `sinf`, `sin`.
template <typename T>
static std::optional<std::pair<T, unsigned>>
parseLibraryName(StringRef name,
                 llvm::function_ref<std::optional<T>(StringRef)> lookup) {
  StringRef base = name;
  std::optional<unsigned> width;
  if (base.consume_front("__ocml_")) {
    if (base.consume_back("_f32"))
      width = 32;
    else if (base.consume_back("_f64"))
      width = 64;
    else
      return std::nullopt;
    if (std::optional<T> found = lookup(base))
      return std::make_pair(*found, *width);
    return std::nullopt;
  }
  // `__nv_fast_expf` and friends: approximations of the same function; the
  // accurate op lowers to each target's own fast path.
  if (base.consume_front("__nv_"))
    base.consume_front("fast_");
  if (std::optional<T> found = lookup(base))
    return std::make_pair(*found, 64u);
  if (base.consume_back("f"))
    if (std::optional<T> found = lookup(base))
      return std::make_pair(*found, 32u);
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

/// CUDA's reinterpretations of a value's bits (`__float_as_int`,
/// `__double2hiint`, ...), which libdevice implements as bitcasts; null for
/// other names or operand types.
static Value buildReinterpretation(OpBuilder &b, Location loc, StringRef name,
                                   ValueRange operands) {
  if (!name.consume_front("__nv_"))
    return nullptr;
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i32 = b.getI32Type(),
       i64 = b.getI64Type();
  auto unary = [&](Type from, Type to) -> Value {
    if (operands.size() != 1 || operands[0].getType() != from)
      return nullptr;
    return arith::BitcastOp::create(b, loc, to, operands[0]);
  };
  if (name == "float_as_int" || name == "float_as_uint")
    return unary(f32, i32);
  if (name == "int_as_float" || name == "uint_as_float")
    return unary(i32, f32);
  if (name == "double_as_longlong")
    return unary(f64, i64);
  if (name == "longlong_as_double")
    return unary(i64, f64);
  if (name == "double2hiint" || name == "double2loint") {
    Value bits = unary(f64, i64);
    if (!bits)
      return nullptr;
    if (name == "double2hiint")
      bits = arith::ShRUIOp::create(
          b, loc, bits, arith::ConstantIntOp::create(b, loc, i64, 32));
    return arith::TruncIOp::create(b, loc, i32, bits);
  }
  if (name == "hiloint2double") {
    if (operands.size() != 2 || operands[0].getType() != i32 ||
        operands[1].getType() != i32)
      return nullptr;
    Value hi = arith::ExtUIOp::create(b, loc, i64, operands[0]);
    Value lo = arith::ExtUIOp::create(b, loc, i64, operands[1]);
    hi = arith::ShLIOp::create(b, loc, hi,
                               arith::ConstantIntOp::create(b, loc, i64, 32));
    return arith::BitcastOp::create(b, loc, f64,
                                    arith::OrIOp::create(b, loc, hi, lo));
  }
  return nullptr;
}

/// libdevice's integer functions and correctly rounded or fast float
/// variants (`__nv_umin`, `__nv_mul24`, `__nv_saturatef`, `__nv_fdividef`,
/// `__nv_fmul_rn`, ...); null for other names or operand types. Fast
/// approximations become the accurate op: every target has its own.
static Value buildLibdeviceExtra(OpBuilder &b, Location loc, StringRef name,
                                 ValueRange operands) {
  if (!name.consume_front("__nv_") || operands.empty())
    return nullptr;
  Type type = operands[0].getType();
  bool sameTypes =
      llvm::all_of(operands, [&](Value v) { return v.getType() == type; });
  if (!sameTypes)
    return nullptr;
  auto isInt = [&](unsigned bits) { return type.isSignlessInteger(bits); };
  auto isFloat = [&](unsigned bits) {
    return isa<FloatType>(type) && type.getIntOrFloatBitWidth() == bits;
  };
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, type, value);
  };
  if (operands.size() == 2) {
    Value x = operands[0], y = operands[1];
    // Integer min/max: min max umin umax (i32), llmin llmax ullmin ullmax.
    bool i32 = isInt(32), i64 = isInt(64);
    if ((i32 && (name == "min")) || (i64 && name == "llmin"))
      return arith::MinSIOp::create(b, loc, x, y);
    if ((i32 && name == "max") || (i64 && name == "llmax"))
      return arith::MaxSIOp::create(b, loc, x, y);
    if ((i32 && name == "umin") || (i64 && name == "ullmin"))
      return arith::MinUIOp::create(b, loc, x, y);
    if ((i32 && name == "umax") || (i64 && name == "ullmax"))
      return arith::MaxUIOp::create(b, loc, x, y);
    if (i32 && (name == "mul24" || name == "umul24")) {
      // The low 32 bits of the product of the low 24 bits (sign-extended
      // for mul24).
      auto low24 = [&](Value v) -> Value {
        if (name == "umul24")
          return arith::AndIOp::create(b, loc, v, constant(0xffffff));
        Value up = arith::ShLIOp::create(b, loc, v, constant(8));
        return arith::ShRSIOp::create(b, loc, up, constant(8));
      };
      return arith::MulIOp::create(b, loc, low24(x), low24(y));
    }
    if (isFloat(32) || isFloat(64)) {
      if (name == "fdividef" || name == "fast_fdividef" ||
          name.starts_with("fdiv_r") || name.starts_with("ddiv_r"))
        return arith::DivFOp::create(b, loc, x, y);
      if (name.starts_with("fmul_r") || name.starts_with("dmul_r"))
        return arith::MulFOp::create(b, loc, x, y);
      if (name.starts_with("fadd_r") || name.starts_with("dadd_r"))
        return arith::AddFOp::create(b, loc, x, y);
      if (name.starts_with("fsub_r") || name.starts_with("dsub_r"))
        return arith::SubFOp::create(b, loc, x, y);
      if (name == "fmodf" || name == "fmod")
        return arith::RemFOp::create(b, loc, x, y);
    }
    return nullptr;
  }
  if (operands.size() == 3 && (isFloat(32) || isFloat(64)) &&
      (name.starts_with("fmaf_r") || name.starts_with("fma_r")))
    return math::FmaOp::create(b, loc, operands[0], operands[1], operands[2]);
  if (operands.size() != 1)
    return nullptr;
  Value x = operands[0];
  if ((isInt(32) && name == "abs") || (isInt(64) && name == "llabs"))
    return math::AbsIOp::create(b, loc, x);
  if ((isInt(32) && name == "popc") || (isInt(64) && name == "popcll"))
    return math::CtPopOp::create(b, loc, x);
  if ((isInt(32) && name == "clz") || (isInt(64) && name == "clzll"))
    return math::CountLeadingZerosOp::create(b, loc, x);
  if ((isInt(32) && name == "ffs") || (isInt(64) && name == "ffsll")) {
    // 1 + the index of the lowest set bit, 0 for 0 (an i32 either way).
    Value index = arith::AddIOp::create(
        b, loc, math::CountTrailingZerosOp::create(b, loc, x), constant(1));
    Value zero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, constant(0));
    Value result = arith::SelectOp::create(b, loc, zero, constant(0), index);
    if (isInt(64))
      result = arith::TruncIOp::create(b, loc, b.getI32Type(), result);
    return result;
  }
  if (isFloat(32) && name == "saturatef") {
    // Clamped to [0, 1]; NaN gives 0.
    Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    return arith::MinNumFOp::create(
        b, loc, arith::MaxNumFOp::create(b, loc, x, zero), one);
  }
  if ((isFloat(32) || isFloat(64)) &&
      (name.starts_with("frcp_r") || name.starts_with("drcp_r"))) {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    return arith::DivFOp::create(b, loc, one, x);
  }
  if ((isFloat(32) || isFloat(64)) &&
      (name.starts_with("fsqrt_r") || name.starts_with("dsqrt_r")))
    return math::SqrtOp::create(b, loc, x);
  return nullptr;
}

/// libdevice's conversions with a rounding mode (`__nv_int2float_ru`,
/// `__nv_float2int_rd`, `__nv_double2float_rz`, ...): `<from>2<to>_r<mode>`
/// with from/to among int, uint, ll, ull, float, double. A float-to-integer
/// conversion rounds first as the mode says (n: to even, z: toward zero, u:
/// up, d: down); conversions to a float round to nearest whatever the mode
/// (every target has one rounding mode; the last bit may differ), as the
/// other rounding-mode variants do.
static Value buildConversion(OpBuilder &b, Location loc, StringRef name,
                             ValueRange operands) {
  if (!name.consume_front("__nv_") || operands.size() != 1)
    return nullptr;
  auto [from, rest] = name.split('2');
  auto [to, mode] = rest.split("_r");
  if (mode.size() != 1 || !StringRef("nzud").contains(mode[0]))
    return nullptr;
  struct Kind {
    Type type;
    bool isFloat, isSigned;
  };
  auto kindOf = [&](StringRef spelled) -> std::optional<Kind> {
    return llvm::StringSwitch<std::optional<Kind>>(spelled)
        .Case("int", Kind{b.getI32Type(), false, true})
        .Case("uint", Kind{b.getI32Type(), false, false})
        .Case("ll", Kind{b.getI64Type(), false, true})
        .Case("ull", Kind{b.getI64Type(), false, false})
        .Case("float", Kind{b.getF32Type(), true, true})
        .Case("double", Kind{b.getF64Type(), true, true})
        .Default(std::nullopt);
  };
  std::optional<Kind> source = kindOf(from), target = kindOf(to);
  Value x = operands[0];
  if (!source || !target || x.getType() != source->type ||
      source->type == target->type)
    return nullptr;
  if (source->isFloat && target->isFloat)
    return source->type.getIntOrFloatBitWidth() >
                   target->type.getIntOrFloatBitWidth()
               ? arith::TruncFOp::create(b, loc, target->type, x).getResult()
               : arith::ExtFOp::create(b, loc, target->type, x).getResult();
  if (!source->isFloat && target->isFloat)
    return source->isSigned
               ? arith::SIToFPOp::create(b, loc, target->type, x).getResult()
               : arith::UIToFPOp::create(b, loc, target->type, x).getResult();
  if (source->isFloat && !target->isFloat) {
    Value rounded = x;
    switch (mode[0]) {
    case 'n':
      rounded = math::RoundEvenOp::create(b, loc, x);
      break;
    case 'u':
      rounded = math::CeilOp::create(b, loc, x);
      break;
    case 'd':
      rounded = math::FloorOp::create(b, loc, x);
      break;
    default:
      break; // toward zero: the conversion truncates
    }
    return target->isSigned
               ? arith::FPToSIOp::create(b, loc, target->type, rounded)
                     .getResult()
               : arith::FPToUIOp::create(b, loc, target->type, rounded)
                     .getResult();
  }
  return nullptr;
}

Value nabla::raise::buildDeviceLibraryCall(OpBuilder &builder, Location loc,
                                           StringRef name,
                                           ValueRange operands) {
  if (Value converted = buildConversion(builder, loc, name, operands))
    return converted;
  if (Value bits = buildReinterpretation(builder, loc, name, operands))
    return bits;
  if (Value extra = buildLibdeviceExtra(builder, loc, name, operands))
    return extra;
  std::optional<std::pair<MathFn, unsigned>> parsed =
      parseLibraryName<MathFn>(name, lookupMathName);
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
  // Saturating arithmetic, which clang emits for clamped subtractions.
  if ((name == "usub.sat" || name == "uadd.sat" || name == "ssub.sat" ||
       name == "sadd.sat") &&
      operands.size() == 2 && operands[0].getType().isSignlessInteger()) {
    Value x = operands[0], y = operands[1];
    auto type = cast<IntegerType>(x.getType());
    unsigned width = type.getWidth();
    auto constant = [&](const APInt &value) -> Value {
      return arith::ConstantOp::create(builder, loc,
                                       builder.getIntegerAttr(type, value));
    };
    auto cmp = [&](arith::CmpIPredicate p, Value a, Value b) -> Value {
      return arith::CmpIOp::create(builder, loc, p, a, b);
    };
    auto select = [&](Value c, Value a, Value b) -> Value {
      return arith::SelectOp::create(builder, loc, c, a, b);
    };
    if (name == "usub.sat")
      return select(cmp(arith::CmpIPredicate::ugt, x, y),
                    arith::SubIOp::create(builder, loc, x, y),
                    constant(APInt::getZero(width)));
    if (name == "uadd.sat") {
      Value sum = arith::AddIOp::create(builder, loc, x, y);
      return select(cmp(arith::CmpIPredicate::ult, sum, x),
                    constant(APInt::getMaxValue(width)), sum);
    }
    // Signed: the wrapped result overflowed when its sign differs from what
    // the operands' signs promise; it then saturates toward x's sign.
    bool add = name == "sadd.sat";
    Value result = add ? Value(arith::AddIOp::create(builder, loc, x, y))
                       : Value(arith::SubIOp::create(builder, loc, x, y));
    Value zero = constant(APInt::getZero(width));
    Value xNegative = cmp(arith::CmpIPredicate::slt, x, zero);
    Value yNegative = cmp(arith::CmpIPredicate::slt, y, zero);
    Value rNegative = cmp(arith::CmpIPredicate::slt, result, zero);
    // add: x, y of one sign and r of the other; sub: x, y of opposite signs
    // and r's sign not x's.
    Value sameSigns = cmp(arith::CmpIPredicate::eq, xNegative, yNegative);
    Value operandsAllow = add ? sameSigns
                              : Value(arith::XOrIOp::create(
                                    builder, loc, sameSigns,
                                    arith::ConstantIntOp::create(
                                        builder, loc, builder.getI1Type(), 1)));
    Value overflow = arith::AndIOp::create(
        builder, loc, operandsAllow,
        cmp(arith::CmpIPredicate::ne, rNegative, xNegative));
    Value limit = select(xNegative, constant(APInt::getSignedMinValue(width)),
                         constant(APInt::getSignedMaxValue(width)));
    return select(overflow, limit, result);
  }
  if (name == "ctlz")
    return Value(math::CountLeadingZerosOp::create(builder, loc, operands[0]));
  if (name == "cttz")
    return Value(math::CountTrailingZerosOp::create(builder, loc, operands[0]));
  if (name == "ctpop")
    return Value(math::CtPopOp::create(builder, loc, operands[0]));
  return failure();
}

namespace {
/// How a sine-and-cosine library function takes its argument and returns.
struct SinCosForm {
  bool timesPi = false;     // sincospi: of pi * x
  bool returnsSine = false; // OCML: returns the sine, stores the cosine
};
} // namespace

/// The form of `name` if it is a sine-and-cosine function of the device
/// libraries or C.
static std::optional<SinCosForm> parseSinCosName(StringRef name) {
  auto timesPi = [](StringRef base) -> std::optional<bool> {
    if (base == "sincos")
      return false;
    if (base == "sincospi")
      return true;
    return std::nullopt;
  };
  std::optional<std::pair<bool, unsigned>> parsed =
      parseLibraryName<bool>(name, timesPi);
  if (!parsed)
    return std::nullopt;
  return SinCosForm{parsed->first, name.starts_with("__ocml_")};
}

void nabla::raise::rewriteSinCosCalls(ModuleOp module) {
  SmallVector<Operation *> calls;
  module.walk([&](Operation *op) {
    if (isa<LLVM::SincosOp>(op))
      calls.push_back(op);
    else if (auto call = dyn_cast<LLVM::CallOp>(op))
      if (call.getCallee() && parseSinCosName(*call.getCallee()))
        calls.push_back(op);
  });
  for (Operation *op : calls) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    auto floatType = dyn_cast<FloatType>(x.getType());
    if (!floatType)
      continue;
    auto sinCos = [&](Value angle) {
      return std::make_pair(Value(LLVM::SinOp::create(b, loc, angle)),
                            Value(LLVM::CosOp::create(b, loc, angle)));
    };
    if (auto intrinsic = dyn_cast<LLVM::SincosOp>(op)) {
      // {sin, cos} as a struct: its two fields' extractions.
      auto [sine, cosine] = sinCos(x);
      bool replaced = true;
      for (Operation *user : llvm::to_vector(op->getUsers())) {
        auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
        if (!extract || extract.getPosition().size() != 1) {
          replaced = false;
          continue;
        }
        extract.getResult().replaceAllUsesWith(
            extract.getPosition()[0] == 0 ? sine : cosine);
        extract->erase();
      }
      if (replaced)
        op->erase();
      continue;
    }
    auto call = cast<LLVM::CallOp>(op);
    SinCosForm form = *parseSinCosName(*call.getCallee());
    unsigned pointers = form.returnsSine ? 1 : 2;
    if (call.getNumOperands() != 1 + pointers ||
        call.getNumResults() != (form.returnsSine ? 1 : 0) ||
        !llvm::all_of(call.getOperands().drop_front(), [](Value p) {
          return isa<LLVM::LLVMPointerType>(p.getType());
        }))
      continue; // not the library's signature: the raise refuses the call
    Value angle = x;
    if (form.timesPi)
      angle = LLVM::FMulOp::create(
          b, loc, x,
          LLVM::ConstantOp::create(b, loc, floatType,
                                   b.getFloatAttr(floatType, M_PI)));
    auto [sine, cosine] = sinCos(angle);
    unsigned alignment = floatType.getWidth() / 8;
    if (form.returnsSine) {
      LLVM::StoreOp::create(b, loc, cosine, call.getOperand(1), alignment);
      call.getResult().replaceAllUsesWith(sine);
    } else {
      LLVM::StoreOp::create(b, loc, sine, call.getOperand(1), alignment);
      LLVM::StoreOp::create(b, loc, cosine, call.getOperand(2), alignment);
    }
    call.erase();
  }
}
