//===- TapeSize.cpp - The bytes of a launch's global-memory tape ----------===//
//
// Evaluates the manifest's tape formula with arith's semantics: every value
// is `bits` wide (two's complement), signed ops read their operands
// sign-extended, and a division by zero is an error (the kernel would have
// computed garbage; the launch is refused instead).
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/TapeSize.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

using namespace nabla::runtime;

namespace {

uint64_t mask(uint64_t v, unsigned bits) {
  return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1);
}

int64_t signedOf(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(v);
  uint64_t sign = uint64_t(1) << (bits - 1);
  return static_cast<int64_t>((mask(v, bits) ^ sign) - sign);
}

struct Launch {
  const ScalarArgument &argument;
  const BufferElement &element;
  Dim3 grid, block, blockId, threadId;
  uint64_t capacity;
};

uint32_t component(const Dim3 &d, int64_t dim) {
  return dim == 0 ? d.x : dim == 1 ? d.y : d.z;
}

/// True if `expr` reads a thread's or block's id.
bool variesByThread(const SizeExpr &expr) {
  if (expr.op == "thread_id" || expr.op == "block_id")
    return true;
  return std::any_of(expr.operands.begin(), expr.operands.end(),
                     variesByThread);
}

bool evaluate(const SizeExpr &e, const Launch &launch, uint64_t &result,
              std::string &error) {
  unsigned bits = e.bits;
  if (e.op == "const") {
    result = mask(static_cast<uint64_t>(e.value), bits);
    return true;
  }
  if (e.op == "capacity") {
    result = mask(launch.capacity, bits);
    return true;
  }
  if (e.op == "arg") {
    int64_t value;
    if (e.value < 0 || !launch.argument(unsigned(e.value), value)) {
      error = "the tape formula reads parameter #" + std::to_string(e.value) +
              ", which is not an integer scalar of the launch";
      return false;
    }
    result = mask(static_cast<uint64_t>(value), bits);
    return true;
  }
  if (e.op == "dim" || e.op == "load") {
    int64_t index = -1;
    if (e.op == "load") {
      uint64_t at;
      if (!evaluate(e.operands[0], launch, at, error))
        return false;
      index = signedOf(at, e.operands[0].bits);
    }
    int64_t value = 0, count = 0;
    if (e.value < 0 || !launch.element ||
        !launch.element(unsigned(e.value), index, value, count)) {
      error = "the tape formula reads buffer parameter #" +
              std::to_string(e.value) +
              ", which is not an integer buffer of the launch";
      return false;
    }
    result = mask(static_cast<uint64_t>(e.op == "dim" ? count : value), bits);
    return true;
  }
  if (e.op == "thread_id" || e.op == "block_id" || e.op == "block_dim" ||
      e.op == "grid_dim") {
    if (e.value < 0 || e.value > 2) {
      error = "the tape formula reads dimension " + std::to_string(e.value);
      return false;
    }
    const Dim3 &d = e.op == "thread_id"   ? launch.threadId
                    : e.op == "block_id"  ? launch.blockId
                    : e.op == "block_dim" ? launch.block
                                          : launch.grid;
    result = mask(component(d, e.value), bits);
    return true;
  }
  std::vector<uint64_t> v(e.operands.size());
  for (size_t i = 0; i < v.size(); ++i)
    if (!evaluate(e.operands[i], launch, v[i], error))
      return false;
  // Operand widths: a cast's operand keeps its own.
  unsigned in = e.operands.empty() ? bits : e.operands.back().bits;
  auto s = [&](size_t i) { return signedOf(v[i], e.operands[i].bits); };
  auto u = [&](size_t i) { return mask(v[i], e.operands[i].bits); };
  const std::string &op = e.op;
  bool divides = op.find("div") != std::string::npos ||
                 op.find("rem") != std::string::npos;
  if (divides && u(1) == 0) {
    error = "the tape formula divides by zero for this launch";
    return false;
  }
  uint64_t r = 0;
  if (op == "addi")
    r = v[0] + v[1];
  else if (op == "subi")
    r = v[0] - v[1];
  else if (op == "muli")
    r = v[0] * v[1];
  else if (op == "divui")
    r = u(0) / u(1);
  else if (op == "remui")
    r = u(0) % u(1);
  else if (op == "ceildivui")
    r = u(0) / u(1) + (u(0) % u(1) != 0);
  else if (op == "divsi" || op == "remsi" || op == "ceildivsi" ||
           op == "floordivsi") {
    int64_t a = s(0), b = s(1);
    if (b == -1 && a == std::numeric_limits<int64_t>::min()) {
      r = static_cast<uint64_t>(a);
    } else if (op == "divsi") {
      r = static_cast<uint64_t>(a / b);
    } else if (op == "remsi") {
      r = static_cast<uint64_t>(a % b);
    } else {
      int64_t q = a / b;
      bool inexact = q * b != a;
      if (inexact && op == "ceildivsi" && ((a < 0) == (b < 0)))
        ++q;
      if (inexact && op == "floordivsi" && ((a < 0) != (b < 0)))
        --q;
      r = static_cast<uint64_t>(q);
    }
  } else if (op == "maxsi")
    r = static_cast<uint64_t>(std::max(s(0), s(1)));
  else if (op == "minsi")
    r = static_cast<uint64_t>(std::min(s(0), s(1)));
  else if (op == "maxui")
    r = std::max(u(0), u(1));
  else if (op == "minui")
    r = std::min(u(0), u(1));
  else if (op == "andi")
    r = v[0] & v[1];
  else if (op == "ori")
    r = v[0] | v[1];
  else if (op == "xori")
    r = v[0] ^ v[1];
  else if (op == "shli" || op == "shrui" || op == "shrsi") {
    uint64_t shift = u(1);
    if (shift >= e.operands[0].bits)
      r = 0; // poison in arith; a tape of no words
    else if (op == "shli")
      r = v[0] << shift;
    else if (op == "shrui")
      r = u(0) >> shift;
    else
      r = static_cast<uint64_t>(s(0) >> shift);
  } else if (op == "extsi" || op == "index_cast")
    r = bits > in ? static_cast<uint64_t>(s(0)) : v[0];
  else if (op == "extui" || op == "index_castui" || op == "trunci")
    r = u(0);
  else if (op == "select")
    r = (v[0] & 1) ? v[1] : v[2];
  else if (op == "cmpi") {
    const std::string &p = e.predicate;
    bool c;
    if (p == "eq")
      c = u(0) == u(1);
    else if (p == "ne")
      c = u(0) != u(1);
    else if (p == "slt")
      c = s(0) < s(1);
    else if (p == "sle")
      c = s(0) <= s(1);
    else if (p == "sgt")
      c = s(0) > s(1);
    else if (p == "sge")
      c = s(0) >= s(1);
    else if (p == "ult")
      c = u(0) < u(1);
    else if (p == "ule")
      c = u(0) <= u(1);
    else if (p == "ugt")
      c = u(0) > u(1);
    else if (p == "uge")
      c = u(0) >= u(1);
    else {
      error = "unknown cmpi predicate '" + p + "' in the tape formula";
      return false;
    }
    r = c;
  } else {
    error = "unknown op '" + op + "' in the tape formula";
    return false;
  }
  result = mask(r, bits);
  return true;
}

} // namespace

bool nabla::runtime::tapeWordsPerThread(const TapeInfo &tape,
                                        const ScalarArgument &argument,
                                        const BufferElement &element, Dim3 grid,
                                        Dim3 block, uint64_t &words,
                                        std::string &error, uint64_t capacity) {
  Launch launch{argument, element, grid, block, {0, 0, 0}, {0, 0, 0}, capacity};
  const SizeExpr &formula = tape.wordsPerThread;
  auto one = [&](uint64_t &value) {
    if (!evaluate(formula, launch, value, error))
      return false;
    // Words are counted as signed: a negative count is none.
    if (signedOf(value, formula.bits) < 0)
      value = 0;
    return true;
  };
  if (!variesByThread(formula))
    return one(words);
  // The largest over every thread of the grid (the tape has one column per
  // thread, of the longest column's height).
  words = 0;
  for (uint32_t bz = 0; bz < grid.z; ++bz)
    for (uint32_t by = 0; by < grid.y; ++by)
      for (uint32_t bx = 0; bx < grid.x; ++bx)
        for (uint32_t tz = 0; tz < block.z; ++tz)
          for (uint32_t ty = 0; ty < block.y; ++ty)
            for (uint32_t tx = 0; tx < block.x; ++tx) {
              launch.blockId = {bx, by, bz};
              launch.threadId = {tx, ty, tz};
              uint64_t value;
              if (!one(value))
                return false;
              words = std::max(words, value);
            }
  return true;
}

namespace {

/// The words per thread of `tape` of `kernel` for a launch and the launch's
/// threads; `overflows` when 4 * words * threads exceeds 64 bits. False
/// with `error` (naming the kernel) when the formula cannot be evaluated.
bool launchWords(const KernelInfo &kernel, const TapeInfo &tape,
                 const ScalarArgument &argument, const BufferElement &element,
                 Dim3 grid, Dim3 block, uint64_t &words, uint64_t &threads,
                 bool &overflows, std::string &error, uint64_t capacity = 0) {
  if (!tapeWordsPerThread(tape, argument, element, grid, block, words, error,
                          capacity)) {
    error = "kernel '" + kernel.name + "': " + error;
    return false;
  }
  threads = grid.product() * block.product();
  overflows =
      words && threads > std::numeric_limits<uint64_t>::max() / 4 / words;
  return true;
}

} // namespace

bool nabla::runtime::tapeBytes(const KernelInfo &kernel,
                               const ScalarArgument &argument,
                               const BufferElement &element, Dim3 grid,
                               Dim3 block, uint64_t maxBytes, uint64_t &bytes,
                               std::string &error, uint64_t capacity) {
  bytes = 0;
  if (!kernel.tape)
    return true;
  uint64_t words, threads;
  bool overflows;
  if (!launchWords(kernel, *kernel.tape, argument, element, grid, block, words,
                   threads, overflows, error, capacity))
    return false;
  // A growing tape's capacity and overflow words before the threads'.
  uint64_t extra = kernel.tape->growable ? 2 : 0;
  overflows = overflows ||
              words * threads > std::numeric_limits<uint64_t>::max() / 4 - 2;
  uint64_t cap = maxBytes ? maxBytes : kDefaultMaxTapeBytes;
  if (overflows || 4 * (words * threads + extra) > cap) {
    error = "kernel '" + kernel.name + "' needs a global-memory tape of " +
            (overflows ? std::string("more than 2^64")
                       : std::to_string(4 * words * threads)) +
            " bytes (4 * (" + kernel.tape->formula +
            ") = " + std::to_string(4 * words) + " bytes per thread, " +
            std::to_string(threads) + " threads" +
            (kernel.tape->growable ? ", capacity " + std::to_string(capacity)
                                   : std::string()) +
            "), over the limit of " + std::to_string(cap) +
            " bytes (--max-tape-bytes)";
    return false;
  }
  bytes = 4 * (words * threads + extra);
  return true;
}

bool nabla::runtime::checkSplitTape(const KernelInfo &kernel,
                                    const ScalarArgument &argument,
                                    const BufferElement &element, Dim3 grid,
                                    Dim3 block, uint64_t elements,
                                    std::string &error) {
  if (!kernel.splitTape)
    return true;
  uint64_t words, threads;
  bool overflows;
  if (!launchWords(kernel, *kernel.splitTape, argument, element, grid, block,
                   words, threads, overflows, error))
    return false;
  if (overflows) {
    error = "kernel '" + kernel.name + "' needs a split-mode tape of more "
            "than 2^64 bytes";
    return false;
  }
  if (elements >= words * threads)
    return true;
  error = "kernel '" + kernel.name + "' needs a split-mode tape (parameter #" +
          std::to_string(kernel.splitTape->param) + ") of " +
          std::to_string(words * threads) + " int32 elements (" +
          kernel.splitTape->formula + " = " + std::to_string(words) +
          " per thread, " + std::to_string(threads) + " threads), got " +
          std::to_string(elements) +
          ": pass the same zeroed buffer to the augmented forward and the "
          "reverse";
  return false;
}

uint64_t nabla::runtime::initialTapeCapacity() {
  if (const char *text = std::getenv("NABLA_TAPE_CAPACITY")) {
    char *end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (end != text && *end == '\0' && value > 0 && value < (1ull << 31))
      return value;
  }
  return 32;
}
