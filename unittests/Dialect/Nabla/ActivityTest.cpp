//===- ActivityTest.cpp - Activity classification tests -------------------===//
//
// Pins which types each activity accepts in reverse and forward mode, and the
// textual form of `#nabla.activity<...>`.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/InitAll.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace nabla;

namespace {

class ActivityTest : public ::testing::Test {
protected:
  ActivityTest() {
    DialectRegistry registry;
    nabla::registerAllDialects(registry);
    registry.insert<LLVM::LLVMDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  Type f32() { return Float32Type::get(&context); }
  Type i32() { return IntegerType::get(&context, 32); }
  Type memref() { return MemRefType::get({ShapedType::kDynamic}, f32()); }
  Type pointer() { return LLVM::LLVMPointerType::get(&context, 1); }

  MLIRContext context;
};

TEST_F(ActivityTest, ShadowAndActiveClasses) {
  EXPECT_TRUE(hasShadow(Activity::Dup));
  EXPECT_TRUE(hasShadow(Activity::DupNoNeed));
  EXPECT_FALSE(hasShadow(Activity::Const));
  EXPECT_FALSE(hasShadow(Activity::Active));
  EXPECT_TRUE(isActiveValue(Activity::Active));
  EXPECT_TRUE(isActiveValue(Activity::ActiveNoNeed));
  EXPECT_FALSE(isActiveValue(Activity::Dup));
}

TEST_F(ActivityTest, DifferentiableScalarTypes) {
  EXPECT_TRUE(isDifferentiableScalarType(f32()));
  EXPECT_TRUE(isDifferentiableScalarType(Float64Type::get(&context)));
  EXPECT_TRUE(isDifferentiableScalarType(BFloat16Type::get(&context)));
  EXPECT_TRUE(isDifferentiableScalarType(VectorType::get({4}, f32())));
  EXPECT_TRUE(isDifferentiableScalarType(ComplexType::get(f32())));
  EXPECT_FALSE(isDifferentiableScalarType(i32()));
  EXPECT_FALSE(isDifferentiableScalarType(IndexType::get(&context)));
  EXPECT_FALSE(isDifferentiableScalarType(VectorType::get({4}, i32())));
  EXPECT_FALSE(isDifferentiableScalarType(memref()));
}

TEST_F(ActivityTest, MemoryTypes) {
  EXPECT_TRUE(isMemoryType(memref()));
  EXPECT_TRUE(isMemoryType(UnrankedMemRefType::get(f32(), Attribute())));
  EXPECT_TRUE(isMemoryType(pointer()));
  EXPECT_FALSE(isMemoryType(f32()));
}

TEST_F(ActivityTest, ReverseModeArguments) {
  auto mode = DerivativeMode::Reverse;
  EXPECT_FALSE(diagnoseArgumentActivity(mode, Activity::Const, i32()));
  EXPECT_FALSE(diagnoseArgumentActivity(mode, Activity::Active, f32()));
  EXPECT_FALSE(diagnoseArgumentActivity(mode, Activity::Dup, memref()));
  EXPECT_FALSE(diagnoseArgumentActivity(mode, Activity::DupNoNeed, pointer()));
  // Memory is dup, scalars active; activenoneed is for results.
  EXPECT_TRUE(diagnoseArgumentActivity(mode, Activity::Active, memref()));
  EXPECT_TRUE(diagnoseArgumentActivity(mode, Activity::Dup, f32()));
  EXPECT_TRUE(diagnoseArgumentActivity(mode, Activity::Active, i32()));
  EXPECT_TRUE(diagnoseArgumentActivity(mode, Activity::ActiveNoNeed, f32()));
}

TEST_F(ActivityTest, ForwardModeArguments) {
  auto mode = DerivativeMode::Forward;
  EXPECT_FALSE(diagnoseArgumentActivity(mode, Activity::Dup, f32()));
  EXPECT_FALSE(diagnoseArgumentActivity(mode, Activity::Dup, memref()));
  EXPECT_FALSE(diagnoseArgumentActivity(mode, Activity::DupNoNeed, pointer()));
  EXPECT_TRUE(diagnoseArgumentActivity(mode, Activity::Dup, i32()));
  EXPECT_TRUE(diagnoseArgumentActivity(mode, Activity::Active, f32()));
}

TEST_F(ActivityTest, ResultActivities) {
  EXPECT_FALSE(diagnoseResultActivity(DerivativeMode::Reverse,
                                      Activity::ActiveNoNeed, f32()));
  EXPECT_TRUE(
      diagnoseResultActivity(DerivativeMode::Reverse, Activity::Dup, f32()));
  EXPECT_TRUE(
      diagnoseResultActivity(DerivativeMode::Reverse, Activity::Active, i32()));
  EXPECT_FALSE(diagnoseResultActivity(DerivativeMode::Forward,
                                      Activity::DupNoNeed, f32()));
  EXPECT_TRUE(
      diagnoseResultActivity(DerivativeMode::Forward, Activity::Active, f32()));
  EXPECT_FALSE(
      diagnoseResultActivity(DerivativeMode::Forward, Activity::Const, i32()));
}

TEST_F(ActivityTest, AttributeTextualForm) {
  for (Activity activity : {Activity::Const, Activity::Dup, Activity::DupNoNeed,
                            Activity::Active, Activity::ActiveNoNeed}) {
    std::string text =
        "#nabla.activity<" + stringifyActivity(activity).str() + ">";
    Attribute parsed = parseAttribute(text, &context);
    ASSERT_TRUE(parsed) << text;
    EXPECT_EQ(parsed, ActivityAttr::get(&context, activity));
    std::string printed;
    llvm::raw_string_ostream os(printed);
    os << parsed;
    EXPECT_EQ(printed, text);
  }
}

} // namespace
