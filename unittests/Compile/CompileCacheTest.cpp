//===- CompileCacheTest.cpp - What a compile cache key depends on ---------===//
//
// Every input of a compilation changes its key: the module (also only a
// location), each CompileOptions field, Nabla's and LLVM's version strings,
// the compiler binary and the toolchain; the same inputs give the same key.
//
//===----------------------------------------------------------------------===//

#include "nabla/Compile/CompileCache.h"
#include "nabla/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <functional>
#include <set>

using namespace mlir;
using namespace nabla;

namespace {

constexpr llvm::StringLiteral kKernel = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%A: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %a = memref.load %A[%i] : memref<?xf32>
      %b = arith.addf %a, %a : f32
      memref.store %b, %A[%i] : memref<?xf32>
      gpu.return
    }
  }
}
)mlir";

class CompileCacheTest : public ::testing::Test {
protected:
  CompileCacheTest() {
    DialectRegistry registry;
    registerUpstreamDialects(registry);
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
  }

  OwningOpRef<ModuleOp> parse(llvm::StringRef text,
                              llvm::StringRef name = "kernel.mlir") {
    return parseSourceString<ModuleOp>(text, &context, name);
  }

  std::string keyOf(ModuleOp module, const CompileOptions &options,
                    const CompileEnvironment &environment) {
    return getCompileCacheKey(module, options, environment);
  }

  static CompileEnvironment baseEnvironment() {
    CompileEnvironment environment;
    environment.nablaVersion = "0.1.0";
    environment.llvmVersion = "22.1.0";
    environment.compilerIdentity = "compiler";
    environment.toolchainIdentity = "";
    return environment;
  }

  MLIRContext context;
};

TEST_F(CompileCacheTest, SameInputsSameKey) {
  OwningOpRef<ModuleOp> a = parse(kKernel), b = parse(kKernel);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(keyOf(*a, {}, baseEnvironment()), keyOf(*b, {}, baseEnvironment()));
}

TEST_F(CompileCacheTest, EveryInputChangesTheKey) {
  OwningOpRef<ModuleOp> module = parse(kKernel);
  ASSERT_TRUE(module);
  std::string base = keyOf(*module, {}, baseEnvironment());

  std::vector<std::pair<const char *, std::function<void(CompileOptions &)>>>
      optionChanges = {
          {"target", [](CompileOptions &o) { o.target = CompileTarget::NVVM; }},
          {"chip", [](CompileOptions &o) { o.chip = "sm_90"; }},
          {"abi", [](CompileOptions &o) { o.abi = "v1"; }},
          {"strategy", [](CompileOptions &o) { o.relocStrategy = "table"; }},
          {"opt-level", [](CompileOptions &o) { o.optLevel = 3; }},
          {"workgroup", [](CompileOptions &o) { o.workgroupSize = {64}; }},
          {"workgroup-2d",
           [](CompileOptions &o) {
             o.workgroupSize = {64, 1};
           }},
          {"subgroup", [](CompileOptions &o) { o.subgroupSize = 64; }},
          {"atomics", [](CompileOptions &o) { o.emulateFloatAtomics = true; }},
          {"shared", [](CompileOptions &o) { o.dynamicSharedMemory = 256; }},
          {"kernel", [](CompileOptions &o) { o.onlyKernel = "scale"; }},
          {"reloc",
           [](CompileOptions &o) {
             o.relocValues["k"] = {"f4", {0, 0, 0, 0}};
           }},
          {"reloc-bytes", [](CompileOptions &o) {
             o.relocValues["k"] = {"f4", {0, 0, 128, 63}};
           }}};
  std::set<std::string> keys{base};
  for (auto &[name, change] : optionChanges) {
    CompileOptions options;
    change(options);
    EXPECT_TRUE(keys.insert(keyOf(*module, options, baseEnvironment())).second)
        << name;
  }

  std::vector<
      std::pair<const char *, std::function<void(CompileEnvironment &)>>>
      environmentChanges = {
          {"nabla", [](CompileEnvironment &e) { e.nablaVersion = "0.1.1"; }},
          {"llvm", [](CompileEnvironment &e) { e.llvmVersion = "22.1.1"; }},
          {"compiler",
           [](CompileEnvironment &e) { e.compilerIdentity = "rebuilt"; }},
          {"toolchain",
           [](CompileEnvironment &e) { e.toolchainIdentity = "ptxas 2"; }}};
  for (auto &[name, change] : environmentChanges) {
    CompileEnvironment environment = baseEnvironment();
    change(environment);
    EXPECT_TRUE(keys.insert(keyOf(*module, {}, environment)).second) << name;
  }

  // The module: its ops, and its locations alone.
  std::string changedText = kKernel.str();
  changedText.replace(changedText.find("arith.addf"), 10, "arith.mulf");
  OwningOpRef<ModuleOp> changed = parse(changedText);
  OwningOpRef<ModuleOp> moved = parse(kKernel, "elsewhere.mlir");
  ASSERT_TRUE(changed && moved);
  EXPECT_TRUE(keys.insert(keyOf(*changed, {}, baseEnvironment())).second);
  EXPECT_TRUE(keys.insert(keyOf(*moved, {}, baseEnvironment())).second);
}

TEST_F(CompileCacheTest, ToolchainIdentityIsPerTarget) {
  // The CUDA and ROCm toolchains are looked at only for their targets.
  EXPECT_EQ(CompileEnvironment::current(CompileTarget::SPIRV).toolchainIdentity,
            "");
  EXPECT_NE(CompileEnvironment::current(CompileTarget::NVVM).toolchainIdentity,
            "");
  EXPECT_NE(CompileEnvironment::current(CompileTarget::NVVM).compilerIdentity,
            "");
}

} // namespace
