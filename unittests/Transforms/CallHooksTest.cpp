//===- CallHooksTest.cpp - Values across calls, long call runs split -----===//
//
// nabla-module-to-binary's hooks on the optimized LLVM IR (CallCrossingValues,
// CallChunks) rewrite what the back end sees; the rewritten function must
// compute exactly what the original did. Random straight-line functions (calls
// of a noinline device function and arithmetic on values from anywhere
// before, so that values live across many calls), run before and after by
// LLVM's interpreter, results compared bit for bit.
//
//===----------------------------------------------------------------------===//

#include "CallChunks.h"
#include "CallCrossingValues.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/ExecutionEngine/ExecutionEngine.h"
#include "llvm/ExecutionEngine/GenericValue.h"
#include "llvm/ExecutionEngine/Interpreter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace llvm;

namespace {

/// The device function the random functions call (noinline: it stays a
/// call, as an out-of-line libdevice function does).
constexpr const char *kCallee =
    "define internal float @g(float %a) noinline {\n"
    "  %r = fmul float %a, 0x3FF8000000000000\n"
    "  %s = fadd float %r, 0x3FD0000000000000\n"
    "  %t = fmul float %s, 0x3FE0000000000000\n"
    "  ret float %t\n}\n";

/// A function @f(float, float) of `ops` instructions: each either calls @g
/// on one earlier value or adds/multiplies two; with `branch`, the last
/// third reads values of the first block from a second block.
std::string randomFunction(unsigned seed, int ops, bool branch) {
  std::mt19937 random(seed);
  std::string text =
      std::string(kCallee) + "define float @f(float %v0, float %v1) {\n";
  int defined = 2;
  auto earlier = [&] {
    // Mostly recent values, sometimes one from far before.
    int back = random() % 4 == 0 ? random() % defined : random() % 3;
    return "%v" + std::to_string(std::max(0, defined - 1 - back));
  };
  for (int i = 0; i < ops; ++i) {
    if (branch && i == 2 * ops / 3)
      text += "  br label %next\nnext:\n";
    std::string name = "%v" + std::to_string(defined);
    switch (random() % 3) {
    case 0:
      text += "  " + name + " = call float @g(float " + earlier() + ")\n";
      break;
    case 1:
      text +=
          "  " + name + " = fadd float " + earlier() + ", " + earlier() + "\n";
      break;
    default:
      text +=
          "  " + name + " = fmul float " + earlier() + ", " + earlier() + "\n";
      break;
    }
    ++defined;
  }
  text += "  %sum = fadd float %v" + std::to_string(defined - 1) + ", " +
          earlier() + "\n  ret float %sum\n}\n";
  return text;
}

/// A function @f(float, float) of `loops` loops one after the other, each
/// running `body` ops (as randomFunction's) three times on a carried value
/// and on values from before the loop; each loop's result joins the values
/// later loops read.
std::string randomLoops(unsigned seed, int loops, int body) {
  std::mt19937 random(seed);
  std::string text = std::string(kCallee) +
                     "define float @f(float %v0, float %v1) {\n"
                     "entry:\n  br label %h0\n";
  std::vector<std::string> outer = {"%v0", "%v1"};
  auto pick = [&](const std::vector<std::string> &from, size_t recent) {
    size_t back = random() % 3 == 0 ? random() % from.size()
                                    : random() % std::min(recent, from.size());
    return from[from.size() - 1 - back];
  };
  std::string previous = "entry";
  for (int l = 0; l < loops; ++l) {
    std::string n = std::to_string(l);
    std::vector<std::string> local = {"%x" + n};
    std::string bodyText;
    for (int i = 0; i < body; ++i) {
      std::string name = "%b" + n + "_" + std::to_string(i);
      auto operand = [&] {
        return random() % 4 == 0 ? pick(outer, 3) : pick(local, 3);
      };
      switch (random() % 3) {
      case 0:
        bodyText += "  " + name + " = call float @g(float " + operand() + ")\n";
        break;
      case 1:
        bodyText += "  " + name + " = fadd float " + operand() + ", " +
                    operand() + "\n";
        break;
      default:
        bodyText += "  " + name + " = fmul float " + operand() + ", " +
                    operand() + "\n";
        break;
      }
      local.push_back(name);
    }
    text += "h" + n + ":\n  %i" + n + " = phi i32 [ 0, %" + previous +
            " ], [ %i" + n + "n, %b" + n + " ]\n  %x" + n + " = phi float [ " +
            pick(outer, 3) + ", %" + previous + " ], [ " + local.back() +
            ", %b" + n + " ]\n  %c" + n + " = icmp slt i32 %i" + n +
            ", 3\n  br i1 %c" + n + ", label %b" + n + ", label %e" + n +
            "\nb" + n + ":\n" + bodyText + "  %i" + n + "n = add i32 %i" + n +
            ", 1\n  br label %h" + n + "\ne" + n + ":\n  %o" + n +
            " = fadd float %x" + n + ", " + pick(outer, 1000) + "\n";
    outer.push_back("%x" + n);
    outer.push_back("%o" + n);
    previous = "e" + n;
    text += l + 1 < loops ? "  br label %h" + std::to_string(l + 1) + "\n" : "";
  }
  text += "  %sum = fadd float " + outer.back() + ", " + pick(outer, 1000) +
          "\n  ret float %sum\n}\n";
  return text;
}

std::unique_ptr<Module> parse(const std::string &text, LLVMContext &context) {
  SMDiagnostic error;
  std::unique_ptr<Module> module = parseAssemblyString(text, error, context);
  if (!module) {
    std::string message;
    raw_string_ostream os(message);
    error.print("random", os);
    ADD_FAILURE() << message << "\n" << text;
  }
  return module;
}

/// @f(a, b) run by the interpreter, as bits.
uint32_t run(std::unique_ptr<Module> module, float a, float b) {
  Function *function = module->getFunction("f");
  std::string error;
  std::unique_ptr<ExecutionEngine> engine(
      EngineBuilder(std::move(module))
          .setEngineKind(EngineKind::Interpreter)
          .setErrorStr(&error)
          .create());
  EXPECT_TRUE(engine) << error;
  if (!engine)
    return 0;
  GenericValue args[2];
  args[0].FloatVal = a;
  args[1].FloatVal = b;
  GenericValue result = engine->runFunction(function, args);
  uint32_t bits;
  std::memcpy(&bits, &result.FloatVal, sizeof(bits));
  return bits;
}

struct Hooks {
  int64_t crossing, chunk;
};

/// `text` parsed, with the hooks run on it.
std::unique_ptr<Module> rewrite(const std::string &text, LLVMContext &context,
                                Hooks hooks, int64_t *moved = nullptr,
                                int64_t *chunks = nullptr) {
  std::unique_ptr<Module> module = parse(text, context);
  if (!module)
    return nullptr;
  int64_t m = nabla::keepCallCrossingValuesInMemory(*module, hooks.crossing);
  int64_t c = nabla::splitLongCallSequences(*module, hooks.chunk);
  if (moved)
    *moved = m;
  if (chunks)
    *chunks = c;
  return module;
}

/// Runs the hooks on a random function; the result must be the original's.
void checkText(const std::string &text, unsigned seed, Hooks hooks,
               bool expectMoved, bool expectChunks) {
  LLVMContext context;
  int64_t moved = 0, chunks = 0;
  std::unique_ptr<Module> rewritten =
      rewrite(text, context, hooks, &moved, &chunks);
  ASSERT_TRUE(rewritten);
  std::string broken;
  raw_string_ostream os(broken);
  ASSERT_FALSE(verifyModule(*rewritten, &os)) << broken;
  EXPECT_EQ(moved > 0, expectMoved) << "seed " << seed;
  EXPECT_EQ(chunks > 0, expectChunks) << "seed " << seed;
  for (float a : {0.5f, -1.25f, 3.0f}) {
    std::unique_ptr<Module> original = parse(text, context);
    ASSERT_TRUE(original);
    EXPECT_EQ(run(std::move(original), a, 0.75f),
              run(rewrite(text, context, hooks), a, 0.75f))
        << "seed " << seed << " a " << a;
  }
}

void check(unsigned seed, int ops, bool branch, Hooks hooks, bool expectMoved,
           bool expectChunks) {
  checkText(randomFunction(seed, ops, branch), seed, hooks, expectMoved,
            expectChunks);
}

TEST(CallHooks, ValuesAcrossCallsKeepTheirValues) {
  for (unsigned seed = 1; seed <= 20; ++seed)
    check(seed, 300, /*branch=*/false, {/*crossing=*/4, /*chunk=*/0},
          /*expectMoved=*/true, /*expectChunks=*/false);
}

TEST(CallHooks, LongCallRunsSplitKeepTheirValues) {
  for (unsigned seed = 1; seed <= 20; ++seed)
    check(seed, 300, /*branch=*/false, {/*crossing=*/0, /*chunk=*/8},
          /*expectMoved=*/false, /*expectChunks=*/true);
}

TEST(CallHooks, BothTogetherAndAcrossBlocks) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    check(seed, 400, /*branch=*/false, {4, 16}, true, true);
    check(seed, 400, /*branch=*/true, {4, 16}, true, true);
    check(seed, 400, /*branch=*/true, {1, 3}, true, true);
  }
}

// Loops: values from before a loop read inside it and after it, loop
// results read by later loops; runs of whole loops become functions.
TEST(CallHooks, LoopsKeepTheirValues) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::string text = randomLoops(seed, 12, 30);
    checkText(text, seed, {4, 0}, true, false);
    checkText(text, seed, {0, 8}, false, true);
    checkText(text, seed, {4, 8}, true, true);
    checkText(text, seed, {1, 2}, true, true);
  }
}

TEST(CallHooks, FewCallsLeftAlone) {
  LLVMContext context;
  std::unique_ptr<Module> module =
      parse(randomFunction(7, 30, /*branch=*/false), context);
  ASSERT_TRUE(module);
  EXPECT_EQ(nabla::keepCallCrossingValuesInMemory(*module, 16), 0);
  EXPECT_EQ(nabla::splitLongCallSequences(*module, 128), 0);
  EXPECT_EQ(nabla::keepCallCrossingValuesInMemory(*module, 0), 0);
  EXPECT_EQ(nabla::splitLongCallSequences(*module, 0), 0);
}

} // namespace
