//===- DerivativeRules.td - Nabla's built-in derivative rules -*- tablegen -*-===//
//
// The partial derivatives of the arith and math ops, one record per op, in
// the style of Enzyme-MLIR's derivative files. `$x`, `$y`, `$z` are the op's
// operands, `$r` its result; `(c "v")` a constant of the result's type;
// `(none)` marks an operand that is not differentiable, `(id $v)` is `$v`
// itself. GenDerivativeRules.py
// turns the records (llvm-tblgen --dump-json) into the cases of
// emitBuiltinPartials and the lists of ops that get the external model of
// DifferentiableOpInterface. Rules that need comparisons (max/min, select)
// or integer arithmetic (fpowi) stay hand-written in DerivativeRules.cpp.
//
//===----------------------------------------------------------------------===//

/// An operator of partial-derivative expressions; `build` is C++ with $0,
/// $1... for the operands.
class Expr<string builder> { string build = builder; }

def add : Expr<"add($0, $1)">;
def sub : Expr<"sub($0, $1)">;
def mul : Expr<"mul($0, $1)">;
def div : Expr<"div($0, $1)">;
def neg : Expr<"neg($0)">;
def c : Expr<"c($0)">;
def none : Expr<"Value()">;
def id : Expr<"$0">;
def sin : Expr<"math::SinOp::create(builder, loc, $0).getResult()">;
def cos : Expr<"math::CosOp::create(builder, loc, $0).getResult()">;
def sinh : Expr<"math::SinhOp::create(builder, loc, $0).getResult()">;
def cosh : Expr<"math::CoshOp::create(builder, loc, $0).getResult()">;
def exp : Expr<"math::ExpOp::create(builder, loc, $0).getResult()">;
def log : Expr<"math::LogOp::create(builder, loc, $0).getResult()">;
def sqrt : Expr<"math::SqrtOp::create(builder, loc, $0).getResult()">;
def powf : Expr<"math::PowFOp::create(builder, loc, $0, $1).getResult()">;
def copysign : Expr<"math::CopySignOp::create(builder, loc, $0, $1).getResult()">;
def roundeven : Expr<"math::RoundEvenOp::create(builder, loc, $0).getResult()">;

/// The partials of op `op` (C++ class name), in operand order.
class Rule<string op, list<dag> p> {
  string opName = op;
  list<dag> partials = p;
}

/// A piecewise-constant op: derivative zero wherever it exists.
class ZeroRule<string op> : Rule<op, []>;

def : Rule<"arith::AddFOp", [(c "1"), (c "1")]>;
def : Rule<"arith::SubFOp", [(c "1"), (c "-1")]>;
def : Rule<"arith::MulFOp", [(id $y), (id $x)]>;
def : Rule<"arith::DivFOp", [(div (c "1"), $y), (neg (div $r, $y))]>;
def : Rule<"arith::NegFOp", [(c "-1")]>;
// r = x - trunc(x / y) y (C's fmod): d/dx = 1, d/dy = -trunc(x / y), the
// integer (r - x) / y, rounded to remove the division's rounding.
def : Rule<"arith::RemFOp", [(c "1"), (roundeven (div (sub $r, $x), $y))]>;

def : Rule<"math::SinOp", [(cos $x)]>;
def : Rule<"math::CosOp", [(neg (sin $x))]>;
def : Rule<"math::TanOp", [(add (c "1"), (mul $r, $r))]>;
def : Rule<"math::ExpOp", [(id $r)]>;
// d/dx 2^x = 2^x ln 2
def : Rule<"math::Exp2Op", [(mul $r, (c "0.69314718055994530942"))]>;
def : Rule<"math::ExpM1Op", [(add $r, (c "1"))]>;
def : Rule<"math::LogOp", [(div (c "1"), $x)]>;
def : Rule<"math::Log1pOp", [(div (c "1"), (add $x, (c "1")))]>;
// 1 / (x ln 2), 1 / (x ln 10)
def : Rule<"math::Log2Op", [(div (c "1.44269504088896340736"), $x)]>;
def : Rule<"math::Log10Op", [(div (c "0.43429448190325182765"), $x)]>;
def : Rule<"math::SqrtOp", [(div (c "0.5"), $r)]>;
def : Rule<"math::RsqrtOp", [(div (mul (c "-0.5"), $r), $x)]>;
def : Rule<"math::CbrtOp", [(div $r, (mul (c "3"), $x))]>;
def : Rule<"math::TanhOp", [(sub (c "1"), (mul $r, $r))]>;
def : Rule<"math::SinhOp", [(cosh $x)]>;
def : Rule<"math::CoshOp", [(sinh $x)]>;
def : Rule<"math::AtanOp", [(div (c "1"), (add (c "1"), (mul $x, $x)))]>;
// The inverse functions' derivatives; 1 - x² and x² - 1 are factored as
// (1 - x)(1 + x) and (x - 1)(x + 1), which keep their precision near the
// domain's ends (|x| -> 1), where the derivatives are largest.
def : Rule<"math::AsinOp", [(div (c "1"), (sqrt (mul (sub (c "1"), $x),
                                                     (add (c "1"), $x))))]>;
def : Rule<"math::AcosOp", [(div (c "-1"), (sqrt (mul (sub (c "1"), $x),
                                                      (add (c "1"), $x))))]>;
def : Rule<"math::AsinhOp", [(div (c "1"), (sqrt (add (mul $x, $x), (c "1"))))]>;
def : Rule<"math::AcoshOp", [(div (c "1"), (sqrt (mul (sub $x, (c "1")),
                                                      (add $x, (c "1")))))]>;
def : Rule<"math::AtanhOp", [(div (c "1"), (mul (sub (c "1"), $x),
                                                (add (c "1"), $x)))]>;
// atan2 with operands ($x, $y) = (a, b) computes atan(a / b):
// d/da = b / (a² + b²), d/db = -a / (a² + b²)
def : Rule<"math::Atan2Op", [
  (div $y, (add (mul $y, $y), (mul $x, $x))),
  (neg (div $x, (add (mul $y, $y), (mul $x, $x))))]>;
// d/dx x^y = y x^(y-1), d/dy x^y = x^y ln x
def : Rule<"math::PowFOp", [(mul $y, (powf $x, (sub $y, (c "1")))),
                            (mul $r, (log $x))]>;
def : Rule<"math::FmaOp", [(id $y), (id $x), (c "1")]>;
def : Rule<"math::AbsFOp", [(copysign (c "1"), $x)]>;
// 2 / sqrt(pi) exp(-x²)
def : Rule<"math::ErfOp", [(mul (c "1.12837916709551257390"),
                                (exp (neg (mul $x, $x))))]>;
// -2 / sqrt(pi) exp(-x²)
def : Rule<"math::ErfcOp", [(mul (c "-1.12837916709551257390"),
                                 (exp (neg (mul $x, $x))))]>;
def : Rule<"math::CopySignOp", [(mul (copysign (c "1"), $x),
                                     (copysign (c "1"), $y)), (none)]>;

def : ZeroRule<"math::FloorOp">;
def : ZeroRule<"math::CeilOp">;
def : ZeroRule<"math::RoundOp">;
def : ZeroRule<"math::RoundEvenOp">;
def : ZeroRule<"math::TruncOp">;
