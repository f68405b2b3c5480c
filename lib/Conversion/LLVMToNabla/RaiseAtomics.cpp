//===- RaiseAtomics.cpp - LLVM atomicrmw as memref atomics ----------------===//
//
// An atomicrmw whose update memref.atomic_rmw has a kind for becomes one
// (sub and fsub add the negated operand). CUDA's atomicInc/atomicDec
// (uinc_wrap/udec_wrap: counters wrapping at a bound) become a
// memref.generic_atomic_rmw computing the new value from the old one, on
// global memory (the targets lower such a compare-and-swap loop for global
// memory only). An atomic of another type than its object's elements is a
// located error.
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace nabla::raise;

/// The memref atomic kind of an LLVM atomicrmw, and whether the operand is
/// negated first (sub, fsub).
static std::optional<std::pair<arith::AtomicRMWKind, bool>>
getAtomicKind(LLVM::AtomicBinOp op) {
  using K = arith::AtomicRMWKind;
  switch (op) {
  case LLVM::AtomicBinOp::fadd:
    return std::make_pair(K::addf, false);
  case LLVM::AtomicBinOp::fsub:
    return std::make_pair(K::addf, true);
  case LLVM::AtomicBinOp::add:
    return std::make_pair(K::addi, false);
  case LLVM::AtomicBinOp::sub:
    return std::make_pair(K::addi, true);
  case LLVM::AtomicBinOp::max:
    return std::make_pair(K::maxs, false);
  case LLVM::AtomicBinOp::min:
    return std::make_pair(K::mins, false);
  case LLVM::AtomicBinOp::umax:
    return std::make_pair(K::maxu, false);
  case LLVM::AtomicBinOp::umin:
    return std::make_pair(K::minu, false);
  case LLVM::AtomicBinOp::fmax:
    return std::make_pair(K::maxnumf, false);
  case LLVM::AtomicBinOp::fmin:
    return std::make_pair(K::minnumf, false);
  case LLVM::AtomicBinOp::xchg:
    return std::make_pair(K::assign, false);
  case LLVM::AtomicBinOp::_and:
    return std::make_pair(K::andi, false);
  case LLVM::AtomicBinOp::_or:
    return std::make_pair(K::ori, false);
  case LLVM::AtomicBinOp::_xor:
    return std::make_pair(K::xori, false);
  default:
    return std::nullopt;
  }
}

/// The value a wrapping atomicrmw stores given the old value and its bound:
/// inc: old >= bound ? 0 : old + 1; dec: old == 0 || old > bound ? bound :
/// old - 1.
static Value emitWrappedUpdate(OpBuilder &b, Location loc, bool increment,
                               Value old, Value bound) {
  Type type = old.getType();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  };
  if (increment) {
    Value wraps =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, old, bound);
    return arith::SelectOp::create(
        b, loc, wraps, constant(0),
        arith::AddIOp::create(b, loc, old, constant(1)));
  }
  Value wraps = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, old,
                            constant(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, old, bound));
  return arith::SelectOp::create(
      b, loc, wraps, bound, arith::SubIOp::create(b, loc, old, constant(1)));
}

LogicalResult FunctionRaiser::raiseAtomic(LLVM::AtomicRMWOp rmw) {
  Location loc = plainLoc(rmw.getLoc());
  LLVM::AtomicBinOp binOp = rmw.getBinOp();
  bool wrapping = binOp == LLVM::AtomicBinOp::uinc_wrap ||
                  binOp == LLVM::AtomicBinOp::udec_wrap;
  auto kind = getAtomicKind(binOp);
  if (!kind && !wrapping)
    return fail(rmw) << "cannot raise atomicrmw "
                     << LLVM::stringifyAtomicBinOp(binOp);
  Value value = lookup(rmw, rmw.getVal());
  FailureOr<std::pair<Value, Value>> ptr = lookupPointer(rmw, rmw.getPtr());
  if (!value || failed(ptr))
    return failure();
  auto memref = cast<MemRefType>(ptr->first.getType());
  Type element = memref.getElementType();
  // An integer atomic on a float object of its width (a flag or counter
  // kept in a float scratch buffer, llm.c's layer norm backward), or the
  // reverse: a compare-exchange loop whose update reinterprets the bits.
  bool punned = element != value.getType();
  if (punned && (!element.isIntOrFloat() || !value.getType().isIntOrFloat() ||
                 element.getIntOrFloatBitWidth() !=
                     value.getType().getIntOrFloatBitWidth()))
    return fail(rmw) << "cannot raise an atomic of " << value.getType()
                     << " on an object also accessed as another type";
  // A subtraction adds the negated operand.
  if (!wrapping && kind->second)
    value = isa<FloatType>(value.getType())
                ? Value(arith::NegFOp::create(builder, loc, value))
                : Value(arith::SubIOp::create(
                      builder, loc,
                      arith::ConstantOp::create(
                          builder, loc, builder.getZeroAttr(value.getType())),
                      value));
  if (!punned && !wrapping) {
    scalars.map(rmw.getResult(),
                memref::AtomicRMWOp::create(builder, loc, kind->first, value,
                                            ptr->first,
                                            ValueRange{ptr->second}));
    return success();
  }
  // An update no atomic instruction makes: a compare-exchange loop.
  if (memref.getMemorySpace()) {
    if (punned)
      return fail(rmw) << "cannot raise an atomic of " << value.getType()
                       << " on workgroup memory also accessed as " << element
                       << ": its update is computed (a compare-and-swap "
                          "loop), which the targets lower for global memory "
                          "only";
    return fail(rmw) << "cannot raise this atomicrmw "
                     << LLVM::stringifyAtomicBinOp(binOp) << " of "
                     << value.getType()
                     << " on workgroup memory: its update is computed (a "
                        "compare-and-swap loop), which the targets lower "
                        "for global memory only";
  }
  auto generic = memref::GenericAtomicRMWOp::create(builder, loc, ptr->first,
                                                    ValueRange{ptr->second});
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(generic.getBody());
    Value current = generic.getCurrentValue();
    if (punned)
      current =
          arith::BitcastOp::create(builder, loc, value.getType(), current);
    Value updated =
        wrapping ? emitWrappedUpdate(builder, loc,
                                     binOp == LLVM::AtomicBinOp::uinc_wrap,
                                     current, value)
        : kind->first == arith::AtomicRMWKind::assign
            ? value
            : arith::getReductionOp(kind->first, builder, loc, current, value);
    if (punned)
      updated = arith::BitcastOp::create(builder, loc, element, updated);
    memref::AtomicYieldOp::create(builder, loc, updated);
  }
  Value result = generic.getResult();
  if (punned)
    result = arith::BitcastOp::create(builder, loc, value.getType(), result);
  scalars.map(rmw.getResult(), result);
  return success();
}
