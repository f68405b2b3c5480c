//===- RelocGlobalTest.cpp - Relocation record tests ----------------------===//
//
// Pins the byte size of a record (explicit, derived from the type, unknown)
// and that parsed records verify.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/IR/RelocOps.h"
#include "nabla/InitAll.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace nabla::reloc;

namespace {

class RelocGlobalTest : public ::testing::Test {
protected:
  RelocGlobalTest() {
    DialectRegistry registry;
    nabla::registerAllDialects(registry);
    registry.insert<LLVM::LLVMDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `text` as a module and returns its first reloc.global.
  GlobalOp parseGlobal(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return {};
    return *module->getOps<GlobalOp>().begin();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(RelocGlobalTest, ByteSizeFromStaticMemref) {
  GlobalOp global =
      parseGlobal(R"(reloc.global @g : memref<2x3xf64> {key = "k"})");
  ASSERT_TRUE(global);
  EXPECT_EQ(global.getByteSize(), std::optional<int64_t>(48));
}

TEST_F(RelocGlobalTest, ByteSizeExplicitForPointers) {
  GlobalOp global =
      parseGlobal(R"(reloc.global @g : !llvm.ptr<1> {key = "k", size = 24})");
  ASSERT_TRUE(global);
  EXPECT_EQ(global.getByteSize(), std::optional<int64_t>(24));
}

TEST_F(RelocGlobalTest, ByteSizeUnknown) {
  GlobalOp dynamic =
      parseGlobal(R"(reloc.global @g : memref<?xf32> {key = "k"})");
  ASSERT_TRUE(dynamic);
  EXPECT_EQ(dynamic.getByteSize(), std::nullopt);
  GlobalOp pointer = parseGlobal(R"(reloc.global @p : !llvm.ptr {key = "k"})");
  ASSERT_TRUE(pointer);
  EXPECT_EQ(pointer.getByteSize(), std::nullopt);
}

TEST_F(RelocGlobalTest, DefaultKindIsObject) {
  GlobalOp global =
      parseGlobal(R"(reloc.global @g : memref<4xi8> {key = "k"})");
  ASSERT_TRUE(global);
  EXPECT_EQ(global.getKind(), RecordKind::Object);
  EXPECT_FALSE(global.getConstant());
  EXPECT_TRUE(succeeded(verify(*module)));
}

} // namespace
