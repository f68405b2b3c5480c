//===- ShuffleAsm.cpp - Warp shuffles written in PTX assembly -------------===//
//
// CUB (CUDA's block- and warp-level primitives: cub::BlockReduce,
// cub::WarpReduce, cub::BlockScan, also under thrust) writes its shuffles as
// inline PTX: a plain `shfl.sync.<mode>.b32 $0, $1, $2, $3, $4;` of a word,
// and the steps of its sums as small blocks that shuffle, then add where the
// source lane was valid:
//
//   .reg .f32 r0; .reg .pred p;
//   shfl.sync.down.b32 r0|p, $1, $2, $3, $5;
//   @p add.f32 r0, r0, $4;
//   mov.f32 $0, r0;
//
// (32-bit integers and floats, and 64-bit ones as two word shuffles between
// `mov.b64 {lo, hi}` moves). This file evaluates that small language —
// `.reg` declarations, `mov` (copies, splitting and joining 64-bit words),
// `shfl.sync` with an optional predicate output, `add` with an optional
// predicate guard — into LLVM operations: `llvm.nvvm.shfl.sync.<mode>.i32`,
// which the raise turns into gpu.shuffle like CUDA's own `__shfl_*_sync`, the
// predicate computed from the lane id as PTX defines it, adds and selects.
// Anything else stays assembly, which the raise refuses at its line.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;
using namespace nabla::raise;

namespace {

/// The LLVM type of a PTX register type (.f32, .u64, .pred...).
Type registerType(MLIRContext *context, StringRef ptx) {
  if (ptx == ".f32")
    return Float32Type::get(context);
  if (ptx == ".f64")
    return Float64Type::get(context);
  if (ptx == ".pred")
    return IntegerType::get(context, 1);
  if (ptx.size() == 4 && StringRef("usb").contains(ptx[1]))
    if (ptx.ends_with("32") || ptx.ends_with("64"))
      return IntegerType::get(context, ptx.ends_with("32") ? 32 : 64);
  return Type();
}

/// Evaluates the statements of one assembly block; every method returns
/// false on anything outside the language, leaving the block untouched
/// (the ops it built are then dead and erased by the caller).
class ShuffleEvaluator {
public:
  ShuffleEvaluator(LLVM::InlineAsmOp asmOp) : asmOp(asmOp), b(asmOp) {}

  /// The value the block leaves in `$0`, or null.
  Value evaluate() {
    if (asmOp.getNumResults() != 1 ||
        !isa<IntegerType, FloatType>(asmOp.getRes().getType()))
      return nullptr;
    std::string text = normalizeInlineAsm(asmOp.getAsmString());
    SmallVector<StringRef> statements;
    StringRef(text).split(statements, ';', -1, /*KeepEmpty=*/false);
    bool shuffled = false;
    for (StringRef statement : statements) {
      statement = statement.trim();
      if (statement.empty())
        continue;
      if (!step(statement, shuffled))
        return nullptr;
    }
    return shuffled ? output : nullptr;
  }

  /// Ops built for a block that turned out not to be one of ours.
  SmallVector<Operation *> built;

private:
  LLVM::InlineAsmOp asmOp;
  OpBuilder b;
  std::map<std::string, Type, std::less<>> declared;
  std::map<std::string, Value, std::less<>> values;
  Value output;

  Location loc() { return asmOp.getLoc(); }

  template <typename OpTy, typename... Args> Value make(Args &&...args) {
    auto op = OpTy::create(b, loc(), std::forward<Args>(args)...);
    built.push_back(op);
    return op->getResult(0);
  }

  /// The type of operand or register `name`; null if unknown.
  Type typeOf(StringRef name) {
    if (name == "$0")
      return asmOp.getRes().getType();
    if (auto n = operandNumber(name))
      return asmOp.getOperand(*n).getType();
    auto it = declared.find(name);
    return it == declared.end() ? Type() : it->second;
  }

  /// `$N` (N ≥ 1) → the asm operand N - 1.
  std::optional<unsigned> operandNumber(StringRef name) {
    unsigned n;
    if (!name.consume_front("$") || name.getAsInteger(10, n) || n == 0 ||
        n > asmOp.getNumOperands())
      return std::nullopt;
    return n - 1;
  }

  Value read(StringRef name) {
    name = name.trim();
    if (name == "$0")
      return output;
    if (auto n = operandNumber(name))
      return asmOp.getOperand(*n);
    auto it = values.find(name);
    return it == values.end() ? Value() : it->second;
  }

  bool write(StringRef name, Value value) {
    name = name.trim();
    Type type = typeOf(name);
    if (!type || operandNumber(name))
      return false;
    value = as(value, type);
    if (!value)
      return false;
    if (name == "$0")
      output = value;
    else
      values[name.str()] = value;
    return true;
  }

  /// `value` reinterpreted as `type` of the same width.
  Value as(Value value, Type type) {
    if (!value)
      return nullptr;
    if (value.getType() == type)
      return value;
    if (value.getType().getIntOrFloatBitWidth() != type.getIntOrFloatBitWidth())
      return nullptr;
    return make<LLVM::BitcastOp>(type, value);
  }

  Value constant(Type type, int64_t v) {
    return make<LLVM::ConstantOp>(type, b.getIntegerAttr(type, v));
  }

  bool step(StringRef statement, bool &shuffled) {
    MLIRContext *context = asmOp.getContext();
    // `.reg .T a, b;`
    if (statement.consume_front(".reg ")) {
      auto [type, names] = statement.split(' ');
      Type llvmType = registerType(context, type);
      if (!llvmType || names.empty())
        return false;
      SmallVector<StringRef> list;
      names.split(list, ',');
      for (StringRef name : list)
        declared[name.trim().str()] = llvmType;
      return true;
    }
    // `@p <instruction>`: the instruction's result where p, the old value
    // elsewhere.
    Value guard;
    if (statement.starts_with("@")) {
      auto [predicate, rest] = statement.drop_front().split(' ');
      guard = read(predicate);
      if (!guard || !guard.getType().isInteger(1))
        return false;
      statement = rest.trim();
    }
    auto [opcode, operandText] = statement.split(' ');
    SmallVector<StringRef> operands;
    splitOperands(operandText, operands);
    if (opcode.starts_with("shfl.sync.") && !guard) {
      shuffled = true;
      return shuffle(opcode, operands);
    }
    if (opcode.starts_with("mov.") && !guard)
      return move(opcode, operands);
    if (opcode.starts_with("add.") && operands.size() == 3) {
      Type type = registerType(context, opcode.drop_front(strlen("add")));
      Value lhs = as(read(operands[1]), type),
            rhs = as(read(operands[2]), type);
      if (!type || !lhs || !rhs)
        return false;
      Value sum = isa<FloatType>(type) ? make<LLVM::FAddOp>(lhs, rhs)
                                       : make<LLVM::AddOp>(lhs, rhs);
      if (guard) {
        Value old = as(read(operands[0]), type);
        if (!old)
          return false;
        sum = make<LLVM::SelectOp>(guard, sum, old);
      }
      return write(operands[0], sum);
    }
    return false;
  }

  /// Operands separated by commas outside braces (`{lo, hi}` is one).
  static void splitOperands(StringRef text, SmallVectorImpl<StringRef> &out) {
    int depth = 0;
    size_t start = 0;
    for (size_t k = 0; k <= text.size(); ++k) {
      if (k < text.size() && text[k] == '{')
        ++depth;
      if (k < text.size() && text[k] == '}')
        --depth;
      if (k == text.size() || (text[k] == ',' && depth == 0)) {
        StringRef operand = text.slice(start, k).trim();
        if (!operand.empty())
          out.push_back(operand);
        start = k + 1;
      }
    }
  }

  /// `mov.T d, s`, `mov.b64 {lo, hi}, s`, `mov.b64 d, {lo, hi}`.
  bool move(StringRef opcode, ArrayRef<StringRef> operands) {
    if (operands.size() != 2)
      return false;
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    StringRef to = operands[0], from = operands[1];
    if (to.starts_with("{")) {
      auto [lo, hi] = to.drop_front().drop_back().split(',');
      Value word = as(read(from), i64);
      if (opcode != "mov.b64" || !word)
        return false;
      Value high = make<LLVM::LShrOp>(word, constant(i64, 32));
      return write(lo, make<LLVM::TruncOp>(i32, word)) &&
             write(hi, make<LLVM::TruncOp>(i32, high));
    }
    if (from.starts_with("{")) {
      auto [lo, hi] = from.drop_front().drop_back().split(',');
      Value low = as(read(lo), i32), high = as(read(hi), i32);
      if (opcode != "mov.b64" || !low || !high)
        return false;
      Value wide =
          make<LLVM::ShlOp>(make<LLVM::ZExtOp>(i64, high), constant(i64, 32));
      return write(to, make<LLVM::OrOp>(wide, make<LLVM::ZExtOp>(i64, low)));
    }
    return write(to, read(from));
  }

  /// `shfl.sync.<mode>.b32 d[|p], a, b, c, mask`.
  bool shuffle(StringRef opcode, ArrayRef<StringRef> operands) {
    StringRef mode = opcode.drop_front(strlen("shfl.sync."));
    if (!mode.consume_back(".b32") ||
        !llvm::is_contained({"up", "down", "bfly", "idx"}, mode) ||
        operands.size() != 5)
      return false;
    Type i32 = b.getI32Type();
    auto [destination, predicate] = operands[0].split('|');
    Value value = as(read(operands[1]), i32);
    Value offset = as(read(operands[2]), i32);
    Value clamp = as(read(operands[3]), i32);
    Value mask = as(read(operands[4]), i32);
    if (!value || !offset || !clamp || !mask)
      return false;
    auto call = LLVM::CallIntrinsicOp::create(
        b, loc(), i32,
        b.getStringAttr(("llvm.nvvm.shfl.sync." + mode + ".i32").str()),
        ValueRange{mask, value, offset, clamp});
    built.push_back(call);
    if (!write(destination, call.getResult(0)))
      return false;
    if (predicate.empty())
      return true;
    return write(predicate, valid(mode, offset, clamp));
  }

  /// Whether the source lane is in the calling lane's segment (PTX's
  /// `pval`): with segmask = c[12:8], maxLane = (lane & segmask) |
  /// (c[4:0] & ~segmask), minLane = lane & segmask, the source j is lane - b
  /// (up: valid when j ≥ maxLane), lane + b (down), lane ^ b (bfly) or
  /// minLane | (b[4:0] & ~segmask) (idx), valid when j ≤ maxLane.
  Value valid(StringRef mode, Value offset, Value clamp) {
    Type i32 = b.getI32Type();
    auto lane = LLVM::CallIntrinsicOp::create(
        b, loc(), i32, b.getStringAttr("llvm.nvvm.read.ptx.sreg.laneid"),
        ValueRange{});
    built.push_back(lane);
    Value laneId = lane.getResult(0);
    Value low5 = constant(i32, 31);
    Value segmask =
        make<LLVM::AndOp>(make<LLVM::LShrOp>(clamp, constant(i32, 8)), low5);
    Value notSegmask = make<LLVM::XOrOp>(segmask, constant(i32, -1));
    Value minLane = make<LLVM::AndOp>(laneId, segmask);
    Value maxLane = make<LLVM::OrOp>(
        minLane, make<LLVM::AndOp>(make<LLVM::AndOp>(clamp, low5), notSegmask));
    Value delta = make<LLVM::AndOp>(offset, low5);
    if (mode == "up")
      return make<LLVM::ICmpOp>(LLVM::ICmpPredicate::sge,
                                make<LLVM::SubOp>(laneId, delta), maxLane);
    Value source =
        mode == "down" ? make<LLVM::AddOp>(laneId, delta)
        : mode == "bfly"
            ? make<LLVM::XOrOp>(laneId, delta)
            : make<LLVM::OrOp>(minLane, make<LLVM::AndOp>(delta, notSegmask));
    return make<LLVM::ICmpOp>(LLVM::ICmpPredicate::sle, source, maxLane);
  }
};

} // namespace

bool nabla::raise::rewriteShuffleAsm(LLVM::InlineAsmOp asmOp) {
  if (!StringRef(asmOp.getAsmString()).contains("shfl.sync."))
    return false;
  ShuffleEvaluator evaluator(asmOp);
  Value result = evaluator.evaluate();
  if (!result) {
    for (Operation *op : llvm::reverse(evaluator.built))
      op->erase();
    return false;
  }
  asmOp.getRes().replaceAllUsesWith(result);
  asmOp.erase();
  return true;
}
