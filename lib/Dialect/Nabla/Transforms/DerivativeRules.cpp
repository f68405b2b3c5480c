//===- DerivativeRules.cpp - Local derivatives of arith and math ops ------===//
//
// Partial derivatives of the arith and math ops Nabla differentiates, declared
// in DerivativeRules.td (generated into the table below; max/min, select and
// fpowi are written here) and attached to the ops as external models of
// `DifferentiableOpInterface`, so that Nabla's own ops go through the same
// interface a frontend's dialect uses. Each rule reuses the primal result
// where that is cheaper (exp, sqrt, tanh...).
//
//===----------------------------------------------------------------------===//

#include "DerivativeRules.h"
#include "Implementations/EmitterHooks.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"
#include "nabla/Dialect/Nabla/Transforms/DerivativeRuleModels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

Value nabla::createZero(OpBuilder &builder, Location loc, Type type) {
  if (auto complex = dyn_cast<ComplexType>(type)) {
    auto element = cast<FloatType>(complex.getElementType());
    auto zero = builder.getFloatAttr(element, 0.0);
    return complex::ConstantOp::create(builder, loc, type,
                                       builder.getArrayAttr({zero, zero}));
  }
  return arith::ConstantOp::create(builder, loc, type,
                                   cast<TypedAttr>(builder.getZeroAttr(type)));
}

Value nabla::addDerivatives(OpBuilder &builder, Location loc, Value a,
                            Value b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return arith::AddFOp::create(builder, loc, a, b);
}

/// A float constant of `type` (scalar or vector splat).
static Value constant(OpBuilder &builder, Location loc, Type type,
                      double value) {
  Type element = mlir::getElementTypeOrSelf(type);
  TypedAttr attr = builder.getFloatAttr(element, value);
  if (auto vector = dyn_cast<VectorType>(type))
    attr = DenseElementsAttr::get(vector, attr);
  return arith::ConstantOp::create(builder, loc, type, attr);
}

bool nabla::hasZeroDerivative(Operation *op) {
  auto rule = dyn_cast<DifferentiableOpInterface>(op);
  return rule && rule.hasZeroDerivative();
}

bool nabla::hasDerivativeRule(Operation *op) {
  return isa<arith::ExtFOp, arith::TruncFOp, DifferentiableOpInterface>(op);
}

FailureOr<SmallVector<Value>> nabla::emitPartials(OpBuilder &builder,
                                                  Operation *op) {
  auto rule = dyn_cast<DifferentiableOpInterface>(op);
  if (!rule)
    return failure();
  return rule.emitPartials(builder);
}

Value nabla::scaleByPartial(OpBuilder &builder, Location loc,
                            Value derivative, Value partial) {
  if (auto select = partial.getDefiningOp<arith::SelectOp>()) {
    Value onTrue = select.getTrueValue(), onFalse = select.getFalseValue();
    bool routesTrue = matchPattern(onTrue, m_OneFloat()) &&
                      matchPattern(onFalse, m_AnyZeroFloat());
    bool routesFalse = matchPattern(onTrue, m_AnyZeroFloat()) &&
                       matchPattern(onFalse, m_OneFloat());
    if ((routesTrue || routesFalse) &&
        select.getCondition().getType().isInteger(1)) {
      Value zero = createZero(builder, loc, derivative.getType());
      return arith::SelectOp::create(builder, loc, select.getCondition(),
                                     routesTrue ? derivative : zero,
                                     routesTrue ? zero : derivative);
    }
  }
  return arith::MulFOp::create(builder, loc, derivative, partial);
}

Value nabla::castDerivative(OpBuilder &builder, Operation *cast,
                            Value derivative, bool toOperand) {
  Location loc = cast->getLoc();
  Type type =
      toOperand ? cast->getOperand(0).getType() : cast->getResult(0).getType();
  bool widen = isa<arith::ExtFOp>(cast) != toOperand;
  if (widen)
    return arith::ExtFOp::create(builder, loc, type, derivative);
  return arith::TruncFOp::create(builder, loc, type, derivative);
}

/// The partials of one built-in op (see the table below).
static FailureOr<SmallVector<Value>> emitBuiltinPartials(OpBuilder &builder,
                                                         Operation *op) {
  Location loc = op->getLoc();
  Value r = op->getNumResults() == 1 ? op->getResult(0) : Value();
  Type type = r ? r.getType() : Type();
  auto c = [&](double v) { return constant(builder, loc, type, v); };
  auto mul = [&](Value a, Value b) {
    return arith::MulFOp::create(builder, loc, a, b).getResult();
  };
  auto div = [&](Value a, Value b) {
    return arith::DivFOp::create(builder, loc, a, b).getResult();
  };
  auto add = [&](Value a, Value b) {
    return arith::AddFOp::create(builder, loc, a, b).getResult();
  };
  auto sub = [&](Value a, Value b) {
    return arith::SubFOp::create(builder, loc, a, b).getResult();
  };
  auto neg = [&](Value a) {
    return arith::NegFOp::create(builder, loc, a).getResult();
  };
  Value x = op->getNumOperands() ? op->getOperand(0) : Value();
  Value y = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
  Value z = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  (void)z;
  using Partials = SmallVector<Value>;

  // Max/min route the derivative to the operand that won (ties: the first).
  auto chooseFirst = [&](arith::CmpFPredicate predicate) -> Partials {
    Value first = arith::CmpFOp::create(builder, loc, predicate, x, y);
    return {arith::SelectOp::create(builder, loc, first, c(1), c(0)),
            arith::SelectOp::create(builder, loc, first, c(0), c(1))};
  };

  return llvm::TypeSwitch<Operation *, FailureOr<Partials>>(op)
  // The rules declared in DerivativeRules.td.
#define GEN_RULE_CASES
#include "DerivativeRules.inc"
      // Rules that need comparisons or integer arithmetic.
      .Case([&](arith::MaximumFOp) {
        return chooseFirst(arith::CmpFPredicate::OGE);
      })
      .Case([&](arith::MaxNumFOp) {
        return chooseFirst(arith::CmpFPredicate::OGE);
      })
      .Case([&](arith::MinimumFOp) {
        return chooseFirst(arith::CmpFPredicate::OLE);
      })
      .Case([&](arith::MinNumFOp) {
        return chooseFirst(arith::CmpFPredicate::OLE);
      })
      .Case([&](arith::SelectOp select) -> FailureOr<Partials> {
        Value cond = select.getCondition();
        return Partials{
            Value(), arith::SelectOp::create(builder, loc, cond, c(1), c(0)),
            arith::SelectOp::create(builder, loc, cond, c(0), c(1))};
      })
      .Case([&](math::FPowIOp pow) {
        Value n = pow.getRhs();
        Value one = arith::ConstantOp::create(
            builder, loc, n.getType(), builder.getIntegerAttr(n.getType(), 1));
        Value nMinusOne = arith::SubIOp::create(builder, loc, n, one);
        Value nAsFloat = arith::SIToFPOp::create(builder, loc, type, n);
        return Partials{
            mul(nAsFloat, math::FPowIOp::create(builder, loc, x, nMinusOne)),
            Value()};
      })
      .Default([](Operation *) { return failure(); });
}

namespace {

/// The built-in rule of `OpTy`, served from the table above.
template <typename OpTy>
struct BuiltinRule
    : public nabla::DifferentiableOpInterface::ExternalModel<BuiltinRule<OpTy>,
                                                             OpTy> {
  FailureOr<SmallVector<Value>> emitPartials(Operation *op,
                                             OpBuilder &builder) const {
    return emitBuiltinPartials(builder, op);
  }
  bool hasZeroDerivative(Operation *op) const {
    return isa<math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
               math::TruncOp>(op);
  }
};

template <typename... Ops> void attachBuiltinRules(MLIRContext *context) {
  (Ops::template attachInterface<BuiltinRule<Ops>>(*context), ...);
}

} // namespace

void nabla::registerDerivativeRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    attachBuiltinRules<
#define GEN_ARITH_RULE_OPS
#include "DerivativeRules.inc"
        , arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
        arith::MinNumFOp, arith::SelectOp>(context);
  });
  registry.addExtension(+[](MLIRContext *context, math::MathDialect *) {
    attachBuiltinRules<
#define GEN_MATH_RULE_OPS
#include "DerivativeRules.inc"
        , math::FPowIOp>(context);
  });
  // Memory, region, collective and call ops (Implementations/).
  registerArithDerivativeModels(registry);
  registerFuncDerivativeModels(registry);
  registerGPUDerivativeModels(registry);
  registerMemRefDerivativeModels(registry);
  registerRelocDerivativeModels(registry);
  registerSCFDerivativeModels(registry);
}
