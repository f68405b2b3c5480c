//===- MLIRMutator.cpp - MLIR-aware mutations for the fuzz targets --------===//
//
// libFuzzer's byte mutations rarely keep MLIR text parseable, and libMLIR is
// not instrumented, so coverage alone does not steer them back into the
// parser's accepting paths. Half of the mutations here are structure-aware
// instead: they move whole lines (operations), rewire an SSA use to another
// value of the input, swap an element type, a keyword or an op name for
// another one the input or Nabla's dialects use, and set integer literals to
// boundary values. The other half are libFuzzer's own (with the -dict of MLIR
// tokens). Cross-over splices a block of lines of one input into another.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

using Random = std::minstd_rand;

size_t pick(Random &random, size_t n) { return n ? random() % n : 0; }

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string joinLines(const std::vector<std::string> &lines) {
  std::string text;
  for (const std::string &line : lines)
    text += line + "\n";
  return text;
}

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.' || c == '#';
}

/// One token occurrence: [begin, end) in the text.
struct Span {
  size_t begin, end;
};

/// Occurrences of words starting with `sigil` (`%`, `@`, `^`) and of plain
/// words for which `accept` holds (sigil 0).
template <typename Accept>
std::vector<Span> findWords(const std::string &text, char sigil,
                            Accept accept) {
  std::vector<Span> spans;
  for (size_t i = 0; i < text.size();) {
    if (sigil ? text[i] != sigil : !isWordChar(text[i])) {
      ++i;
      continue;
    }
    if (!sigil && i > 0 &&
        (isWordChar(text[i - 1]) || text[i - 1] == '%' || text[i - 1] == '@' ||
         text[i - 1] == '^')) {
      ++i;
      continue;
    }
    size_t end = i + (sigil ? 1 : 0);
    while (end < text.size() && isWordChar(text[end]))
      ++end;
    if (end > i + 1 || !sigil)
      if (accept(text.substr(i, end - i)))
        spans.push_back({i, end});
    i = std::max(end, i + 1);
  }
  return spans;
}

/// Replaces one occurrence from `spans` by `replacement`.
bool replaceSpan(std::string &text, const std::vector<Span> &spans,
                 const std::string &replacement, Random &random) {
  if (spans.empty())
    return false;
  const Span &span = spans[pick(random, spans.size())];
  text.replace(span.begin, span.end - span.begin, replacement);
  return true;
}

/// Replaces one occurrence by the text of another occurrence.
bool rewire(std::string &text, const std::vector<Span> &spans, Random &random) {
  if (spans.size() < 2)
    return false;
  const Span &from = spans[pick(random, spans.size())];
  std::string other = text.substr(from.begin, from.end - from.begin);
  return replaceSpan(text, spans, other, random);
}

bool contains(const char *const *list, size_t n, const std::string &word) {
  return std::find_if(list, list + n, [&](const char *item) {
           return word == item;
         }) != list + n;
}

constexpr const char *kTypes[] = {"f16",
                                  "bf16",
                                  "f32",
                                  "f64",
                                  "i1",
                                  "i8",
                                  "i16",
                                  "i32",
                                  "i64",
                                  "index",
                                  "memref<?xf32>",
                                  "memref<4xf32>",
                                  "memref<?xf64>",
                                  "memref<2x3xf32>",
                                  "vector<4xf32>",
                                  "complex<f32>",
                                  "!llvm.ptr",
                                  "!llvm.ptr<1>",
                                  "tensor<4xf32>",
                                  "none"};
constexpr const char *kKeywords[] = {"const",
                                     "dup",
                                     "dupnoneed",
                                     "active",
                                     "activenoneed",
                                     "bake",
                                     "patch",
                                     "table",
                                     "materialize",
                                     "defer",
                                     "constant",
                                     "workgroup",
                                     "private",
                                     "true",
                                     "false",
                                     "global",
                                     "v1",
                                     "v2",
                                     "whole",
                                     "word",
                                     "known_block_size",
                                     "gpu.kernel",
                                     "nabla.max_trip_count",
                                     "nabla.checkpoints"};
constexpr const char *kOpNames[] = {"nabla.autodiff",
                                    "nabla.fwddiff",
                                    "nabla.custom_derivative",
                                    "nabla.kernel_adjoint",
                                    "reloc.global",
                                    "reloc.get_global",
                                    "reloc.addressof",
                                    "gpu.barrier",
                                    "gpu.thread_id",
                                    "gpu.block_id",
                                    "gpu.block_dim",
                                    "gpu.shuffle",
                                    "gpu.subgroup_reduce",
                                    "gpu.all_reduce",
                                    "memref.load",
                                    "memref.store",
                                    "memref.atomic_rmw",
                                    "memref.alloca",
                                    "arith.addf",
                                    "arith.mulf",
                                    "arith.subf",
                                    "arith.divf",
                                    "arith.select",
                                    "arith.cmpf",
                                    "math.exp",
                                    "math.sin",
                                    "math.sqrt",
                                    "math.powf",
                                    "scf.for",
                                    "scf.if",
                                    "scf.while",
                                    "scf.yield",
                                    "func.call",
                                    "func.return",
                                    "llvm.load",
                                    "llvm.store",
                                    "llvm.addrspacecast",
                                    "llvm.inttoptr",
                                    "llvm.mlir.addressof"};
constexpr const char *kIntegers[] = {"0",
                                     "1",
                                     "-1",
                                     "2",
                                     "3",
                                     "7",
                                     "64",
                                     "1024",
                                     "65535",
                                     "65536",
                                     "2147483647",
                                     "2147483648",
                                     "-2147483648",
                                     "4294967295",
                                     "4294967296",
                                     "9223372036854775807",
                                     "-9223372036854775808",
                                     "18446744073709551615"};

template <size_t N>
const char *pickFrom(const char *const (&list)[N], Random &random) {
  return list[pick(random, N)];
}

/// One structure-aware mutation of `text`; false when it did not apply.
bool mutateOnce(std::string &text, Random &random) {
  switch (pick(random, 10)) {
  case 0:   // Delete a line (an operation, a block label, a brace).
  case 1:   // Duplicate a line somewhere else.
  case 2: { // Swap two lines.
    std::vector<std::string> lines = splitLines(text);
    if (lines.empty())
      return false;
    size_t a = pick(random, lines.size()), b = pick(random, lines.size());
    unsigned kind = pick(random, 3);
    if (kind == 0)
      lines.erase(lines.begin() + a);
    else if (kind == 1)
      lines.insert(lines.begin() + b, lines[a]);
    else
      std::swap(lines[a], lines[b]);
    text = joinLines(lines);
    return true;
  }
  case 3: // Use another SSA value.
    return rewire(
        text, findWords(text, '%', [](const std::string &) { return true; }),
        random);
  case 4: // Refer to another symbol or block.
    return pick(random, 2)
               ? rewire(text,
                        findWords(text, '@',
                                  [](const std::string &) { return true; }),
                        random)
               : rewire(text,
                        findWords(text, '^',
                                  [](const std::string &) { return true; }),
                        random);
  case 5: // Another element type or type.
    return replaceSpan(text,
                       findWords(text, 0,
                                 [](const std::string &w) {
                                   return contains(kTypes, std::size(kTypes),
                                                   w);
                                 }),
                       pickFrom(kTypes, random), random);
  case 6: // Another activity, strategy or keyword.
    return replaceSpan(text,
                       findWords(text, 0,
                                 [](const std::string &w) {
                                   return contains(kKeywords,
                                                   std::size(kKeywords), w);
                                 }),
                       pickFrom(kKeywords, random), random);
  case 7: { // Another op name: one of this input's or a well-known one.
    std::vector<Span> ops = findWords(text, 0, [](const std::string &w) {
      size_t dot = w.find('.');
      return dot != std::string::npos && dot > 0 && dot + 1 < w.size() &&
             std::isalpha(static_cast<unsigned char>(w[0])) &&
             w.find('#') == std::string::npos;
    });
    if (pick(random, 2))
      return rewire(text, ops, random);
    return replaceSpan(text, ops, pickFrom(kOpNames, random), random);
  }
  case 8: // A boundary integer.
    return replaceSpan(
        text,
        findWords(text, 0,
                  [](const std::string &w) {
                    return std::all_of(w.begin(), w.end(), [](char c) {
                      return std::isdigit(static_cast<unsigned char>(c));
                    });
                  }),
        pickFrom(kIntegers, random), random);
  default: { // A static extent becomes dynamic or the other way round.
    std::vector<Span> extents;
    for (size_t i = 0; i + 1 < text.size(); ++i)
      if ((text[i] == '?' ||
           std::isdigit(static_cast<unsigned char>(text[i]))) &&
          text[i + 1] == 'x')
        extents.push_back({i, i + 1});
    return replaceSpan(text, extents, pick(random, 2) ? "?" : "1", random);
  }
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  Random random(seed);
  if (size == 0 || pick(random, 2))
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  bool changed = false;
  for (unsigned i = 0, n = 1 + pick(random, 3); i < n; ++i)
    changed |= mutateOnce(text, random);
  if (!changed || text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2,
                                            uint8_t *out, size_t maxOutSize,
                                            unsigned seed) {
  Random random(seed);
  std::vector<std::string> first =
      splitLines(std::string(reinterpret_cast<const char *>(data1), size1));
  std::vector<std::string> second =
      splitLines(std::string(reinterpret_cast<const char *>(data2), size2));
  if (second.empty())
    return 0;
  // A block of up to 8 lines of the second input, inserted into the first
  // (or replacing as many of its lines).
  size_t from = pick(random, second.size());
  size_t count = std::min<size_t>(1 + pick(random, 8), second.size() - from);
  size_t at = pick(random, first.size() + 1);
  if (pick(random, 2) && at < first.size())
    first.erase(first.begin() + at,
                first.begin() + std::min(first.size(), at + count));
  first.insert(first.begin() + at, second.begin() + from,
               second.begin() + from + count);
  std::string text = joinLines(first);
  if (text.size() > maxOutSize)
    return 0;
  std::memcpy(out, text.data(), text.size());
  return text.size();
}
