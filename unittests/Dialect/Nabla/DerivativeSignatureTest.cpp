//===- DerivativeSignatureTest.cpp - Signature expansion tests ------------===//
//
// Pins the operand/result conventions of DESIGN.md §2 as computed by
// DerivativeSignature::expand for both modes.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace nabla;

namespace {

/// Flattens slots into "role:index" strings for compact comparisons.
std::vector<std::string> describeAll(ArrayRef<SignatureSlot> slots,
                                     bool isOperand) {
  std::vector<std::string> out;
  for (const SignatureSlot &slot : slots)
    out.push_back(slot.describe(isOperand));
  return out;
}

class DerivativeSignatureTest : public ::testing::Test {
protected:
  Type f32() { return Float32Type::get(&context); }
  Type f64() { return Float64Type::get(&context); }
  Type index() { return IndexType::get(&context); }
  Type memref() { return MemRefType::get({ShapedType::kDynamic}, f32()); }

  MLIRContext context;
};

TEST_F(DerivativeSignatureTest, SeedKernelReverse) {
  // mul(A: memref, n: index) with [dup, const]: (A, dA, n) -> ().
  SmallVector<Type> args = {memref(), index()};
  auto signature = DerivativeSignature::expand(
      DerivativeMode::Reverse, args, {}, {Activity::Dup, Activity::Const}, {});
  EXPECT_EQ(
      describeAll(signature.operands, true),
      (std::vector<std::string>{"primal argument #0", "shadow of argument #0",
                                "primal argument #1"}));
  EXPECT_TRUE(signature.results.empty());
  EXPECT_EQ(signature.getOperandTypes(),
            (SmallVector<Type>{memref(), memref(), index()}));
}

TEST_F(DerivativeSignatureTest, ReverseSeedsAndGradients) {
  // f(x: f32, y: f64) -> (f32, f64, f32) with args [active, active] and
  // results [active, activenoneed, const].
  SmallVector<Type> args = {f32(), f64()};
  SmallVector<Type> results = {f32(), f64(), f32()};
  auto signature = DerivativeSignature::expand(
      DerivativeMode::Reverse, args, results,
      {Activity::Active, Activity::Active},
      {Activity::Active, Activity::ActiveNoNeed, Activity::Const});
  EXPECT_EQ(
      describeAll(signature.operands, true),
      (std::vector<std::string>{"primal argument #0", "primal argument #1",
                                "seed of result #0", "seed of result #1"}));
  // Primals of const/active results (not activenoneed), then gradients.
  EXPECT_EQ(describeAll(signature.results, false),
            (std::vector<std::string>{"primal result #0", "primal result #2",
                                      "gradient of argument #0",
                                      "gradient of argument #1"}));
  EXPECT_EQ(signature.getResultTypes(),
            (SmallVector<Type>{f32(), f32(), f32(), f64()}));
}

TEST_F(DerivativeSignatureTest, ForwardInterleavesPrimalAndTangent) {
  // g(x: f32, b: memref) -> (f32, f64, f32) with args [dup, dupnoneed] and
  // results [dup, const, dupnoneed].
  SmallVector<Type> args = {f32(), memref()};
  SmallVector<Type> results = {f32(), f64(), f32()};
  auto signature = DerivativeSignature::expand(
      DerivativeMode::Forward, args, results,
      {Activity::Dup, Activity::DupNoNeed},
      {Activity::Dup, Activity::Const, Activity::DupNoNeed});
  EXPECT_EQ(describeAll(signature.operands, true),
            (std::vector<std::string>{
                "primal argument #0", "shadow of argument #0",
                "primal argument #1", "shadow of argument #1"}));
  EXPECT_EQ(
      describeAll(signature.results, false),
      (std::vector<std::string>{"primal result #0", "tangent of result #0",
                                "primal result #1", "tangent of result #2"}));
}

TEST_F(DerivativeSignatureTest, AllConstIsThePrimalCall) {
  SmallVector<Type> args = {f32(), index()};
  SmallVector<Type> results = {f64()};
  for (DerivativeMode mode :
       {DerivativeMode::Reverse, DerivativeMode::Forward}) {
    auto signature = DerivativeSignature::expand(
        mode, args, results, {Activity::Const, Activity::Const},
        {Activity::Const});
    EXPECT_EQ(signature.getOperandTypes(), (SmallVector<Type>{f32(), index()}));
    EXPECT_EQ(signature.getResultTypes(), (SmallVector<Type>{f64()}));
  }
}

} // namespace
