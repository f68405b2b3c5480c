//===- TapeSizeTest.cpp - Sizing a launch's global-memory tape ------------===//
//
// The manifest's tape formula read and evaluated with arith's semantics
// (widths, signedness, division by zero refused), the largest words over
// the grid when the formula reads thread ids, elements of integer buffers
// (ragged rows), the cap naming the size a
// launch needed, and malformed formulas rejected with their path.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Manifest.h"
#include "nabla/Runtime/TapeSize.h"

#include "gtest/gtest.h"

using namespace nabla::runtime;

namespace {

/// A manifest with one kernel (i32 n, index m, tape) and `words` as its
/// formula.
std::string manifestWith(const std::string &words) {
  return R"({"format": "nabla-manifest", "target": "spirv", "modules": {},
    "kernels": [{"name": "k", "module": "m", "params": [
      {"index": 0, "kind": "scalar", "type": "i32"},
      {"index": 1, "kind": "scalar", "type": "index"},
      {"index": 2, "kind": "buffer", "type": "memref<?xi32>", "element": "i32",
       "shape": [null], "tape": true}],
      "tape": {"param": 2, "formula": "f", "words_per_thread": )" +
         words + "}}]}";
}

bool words(const std::string &formula, int64_t n, int64_t m, Dim3 grid,
           Dim3 block, uint64_t &result, std::string &error) {
  Manifest manifest;
  if (!parseManifest(manifestWith(formula), manifest, error))
    return false;
  auto argument = [&](unsigned index, int64_t &value) {
    if (index > 1)
      return false;
    value = index == 0 ? n : m;
    return true;
  };
  // Parameter #0 read as a buffer: the offsets of ragged rows 0, 3, 3, 10.
  auto element = [](unsigned index, int64_t at, int64_t &value,
                    int64_t &count) {
    static const int64_t offsets[] = {0, 3, 3, 10};
    if (index != 0)
      return false;
    count = 4;
    value = at >= 0 && at < count ? offsets[at] : 0;
    return true;
  };
  return tapeWordsPerThread(*manifest.kernels[0].tape, argument, element,
                            grid, block, result, error);
}

TEST(TapeSizeTest, TripCountOfAnI32Argument) {
  // 2 * select(n > 0, n, 0): the words of a loop taping two values.
  std::string f = R"(["muli", 64, ["index_cast", 64, ["select", 32,
      ["cmpi", 1, "sgt", ["arg", 32, 0], ["const", 32, 0]],
      ["arg", 32, 0], ["const", 32, 0]]], ["const", 64, 2]])";
  uint64_t w = 0;
  std::string error;
  ASSERT_TRUE(words(f, 7, 0, {}, {}, w, error)) << error;
  EXPECT_EQ(w, 14u);
  ASSERT_TRUE(words(f, -3, 0, {}, {}, w, error)) << error;
  EXPECT_EQ(w, 0u);
}

TEST(TapeSizeTest, WidthsWrapAndSignednessFollowsTheOp) {
  uint64_t w = 0;
  std::string error;
  // (n + 1) in i32 wraps at 2^31 - 1; extui then reads it unsigned.
  std::string wrap = R"(["extui", 64, ["addi", 32, ["arg", 32, 0],
      ["const", 32, 1]]])";
  ASSERT_TRUE(words(wrap, 2147483647, 0, {}, {}, w, error)) << error;
  EXPECT_EQ(w, 2147483648u);
  std::string ceil = R"(["ceildivsi", 64, ["arg", 64, 1], ["const", 64, 4]])";
  ASSERT_TRUE(words(ceil, 0, 9, {}, {}, w, error)) << error;
  EXPECT_EQ(w, 3u);
  std::string zero = R"(["divui", 64, ["arg", 64, 1], ["arg", 64, 1]])";
  EXPECT_FALSE(words(zero, 0, 0, {}, {}, w, error));
  EXPECT_NE(error.find("divides by zero"), std::string::npos);
}

TEST(TapeSizeTest, ThreadDependentCountsTakeTheLongestThread) {
  // t + 1 for the global thread id t (causal attention's t2 <= t).
  std::string f = R"(["addi", 64, ["addi", 64, ["muli", 64,
      ["block_id", 64, 0], ["block_dim", 64, 0]], ["thread_id", 64, 0]],
      ["const", 64, 1]])";
  uint64_t w = 0;
  std::string error;
  ASSERT_TRUE(words(f, 0, 0, {3, 1, 1}, {32, 1, 1}, w, error)) << error;
  EXPECT_EQ(w, 96u);
}

TEST(TapeSizeTest, RaggedRowsReadTheirLengthsFromABuffer) {
  // offsets[t + 1] - offsets[t] where t + 1 < dim(offsets), else 0: the
  // longest row (7) over threads 0..3; past the end a read gives 0.
  std::string f = R"(["select", 64,
      ["cmpi", 1, "ult", ["addi", 64, ["thread_id", 64, 0], ["const", 64, 1]],
       ["dim", 64, 0]],
      ["subi", 64, ["load", 64, 0, ["addi", 64, ["thread_id", 64, 0],
                                    ["const", 64, 1]]],
                   ["load", 64, 0, ["thread_id", 64, 0]]],
      ["const", 64, 0]])";
  uint64_t w = 0;
  std::string error;
  ASSERT_TRUE(words(f, 0, 0, {1, 1, 1}, {4, 1, 1}, w, error)) << error;
  EXPECT_EQ(w, 7u);
  // Reading a parameter that is no integer buffer is an error naming it.
  ASSERT_FALSE(words(R"(["load", 64, 1, ["const", 64, 0]])", 0, 0, {1, 1, 1},
                     {1, 1, 1}, w, error));
  EXPECT_NE(error.find("buffer parameter #1"), std::string::npos) << error;
}

TEST(TapeSizeTest, CapNamesTheBytesNeeded) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(manifestWith(R"(["arg", 64, 1])"), manifest,
                            error))
      << error;
  auto argument = [](unsigned index, int64_t &value) {
    value = 1000;
    return index == 1;
  };
  uint64_t bytes = 0;
  EXPECT_TRUE(tapeBytes(manifest.kernels[0], argument, BufferElement(),
                        {2, 1, 1}, {8, 1, 1}, 0, bytes, error));
  EXPECT_EQ(bytes, 4u * 1000 * 16);
  EXPECT_FALSE(tapeBytes(manifest.kernels[0], argument, BufferElement(),
                         {2, 1, 1}, {8, 1, 1}, 4096, bytes, error));
  EXPECT_NE(error.find("needs a global-memory tape of 64000 bytes"),
            std::string::npos)
      << error;
}

TEST(TapeSizeTest, GrowingTapesReadTheCapacityAndTakeTwoMoreWords) {
  // 3 * capacity + m words per thread, the buffer's capacity and overflow
  // words in front.
  std::string text = manifestWith(
      R"(["addi", 64, ["muli", 64, ["capacity", 64, 0], ["const", 64, 3]],
          ["arg", 64, 1]])");
  text.replace(text.find(R"("formula": "f")"), 14,
               R"("formula": "f", "growable": true)");
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(text, manifest, error)) << error;
  ASSERT_TRUE(manifest.kernels[0].tape->growable);
  auto argument = [](unsigned index, int64_t &value) {
    value = 5;
    return index == 1;
  };
  uint64_t bytes = 0;
  EXPECT_TRUE(tapeBytes(manifest.kernels[0], argument, BufferElement(),
                        {2, 1, 1}, {8, 1, 1}, 0, bytes, error, 32));
  EXPECT_EQ(bytes, 4u * ((3 * 32 + 5) * 16 + 2));
  EXPECT_FALSE(tapeBytes(manifest.kernels[0], argument, BufferElement(),
                         {2, 1, 1}, {8, 1, 1}, 4096, bytes, error, 100));
  EXPECT_NE(error.find("capacity 100"), std::string::npos) << error;
}

TEST(TapeSizeTest, MalformedFormulasAreRejectedWithTheirPath) {
  Manifest manifest;
  std::string error;
  EXPECT_FALSE(parseManifest(manifestWith(R"(["pow", 64, 1, 2])"), manifest,
                             error));
  EXPECT_NE(error.find("unknown formula op \"pow\""), std::string::npos)
      << error;
  EXPECT_FALSE(parseManifest(manifestWith(R"(["addi", 64, ["arg", 64, 1]])"),
                             manifest, error));
  EXPECT_NE(error.find("kernels[0].tape.words_per_thread"), std::string::npos)
      << error;
  // A tape parameter without the kernel's tape entry.
  std::string text = manifestWith(R"(["const", 64, 1])");
  text.replace(text.find("\"tape\": {"), 9, "\"other\": {");
  EXPECT_FALSE(parseManifest(text, manifest, error));
  EXPECT_NE(error.find("needs the kernel's \"tape\" entry"), std::string::npos)
      << error;
}

} // namespace
