//===- InlineAsm.cpp - The inline assembly CUDA's headers emit ------------===//
//
// CUDA's headers implement cache-hinted loads and stores (`__ldcs`, `__ldcg`,
// `__ldca`, `__ldlu`, `__ldcv`, `__stcs`, `__stcg`, `__stwb`, `__stwt`, also on
// `float4`/`int2`-style vectors) as PTX inline assembly, and cooperative
// groups reads `%reserved_smem_offset_1` on sm_80 and later whether or not
// the value is used; cuda_fp16/cuda_bf16 convert, pack and compute on
// halves in assembly (`__half`/`__nv_bfloat16` operators, `__hfma`,
// `half2` math). Before planning, the raise turns each recognised instruction
// into plain LLVM operations: loads and stores (a cache hint changes where
// the data is cached, not what is read or written, and every target has its
// own caching), fpext/fptrunc with bitcasts, shifts and ors, half
// arithmetic as the f32 operation between an fpext and an fptrunc, reads of the
// lane id and lane masks (cooperative groups' tiles) the intrinsics that
// read them, CUB's shuffles (ShuffleAsm.cpp). An assembly block
// whose results are unused and that declares no side effects is dropped. Any
// other inline assembly stays, and the raise refuses it with a located error.
//
// Recognised, by the instruction text (one instruction, `;` optional):
//   ld[.global][.<qualifiers>][.v2|.v4].<type>  $0 | {$0, ...}, [$k]
//   st[.global][.<qualifiers>][.v2|.v4].<type>  [$k], $j | {$j, ...}
// where <type> has the width of the LLVM value type (f32 for float, b32/u32/
// s32 for i32, ...), and a vector's lanes are consecutive elements; and
//   [.reg .b16|.b32 c; mov.b16|.b32 c, 0x<hex>U;]
//   <op>[.rn].<f16|bf16|f16x2|bf16x2> $0, <$k | c>, ...
// with <op> one of fma, add, sub, mul, min, max, neg, abs.
//
//===----------------------------------------------------------------------===//

#include "HalfFields.h"
#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace nabla::raise;

namespace {

/// One PTX memory instruction: `ld` or `st`, its lane count and the width
/// of each lane in bits, and the asm operand numbers of the address and of
/// the values (results for ld, inputs for st).
struct MemoryInstruction {
  bool store = false;
  unsigned lanes = 1;
  unsigned bits = 0;
  unsigned address = 0;
  SmallVector<unsigned> values;
};

/// `$N` → N.
std::optional<unsigned> parseOperandRef(StringRef text) {
  text = text.trim();
  unsigned n;
  if (!text.consume_front("$") || text.getAsInteger(10, n))
    return std::nullopt;
  return n;
}

/// `$N` or `{$A, $B, ...}`.
std::optional<SmallVector<unsigned>> parseValueList(StringRef text) {
  text = text.trim();
  SmallVector<unsigned> refs;
  if (text.consume_front("{")) {
    if (!text.consume_back("}"))
      return std::nullopt;
    SmallVector<StringRef> parts;
    text.split(parts, ',');
    for (StringRef part : parts) {
      std::optional<unsigned> ref = parseOperandRef(part);
      if (!ref)
        return std::nullopt;
      refs.push_back(*ref);
    }
    return refs;
  }
  std::optional<unsigned> ref = parseOperandRef(text);
  if (!ref)
    return std::nullopt;
  refs.push_back(*ref);
  return refs;
}

std::optional<MemoryInstruction> parseMemoryInstruction(StringRef asmString) {
  StringRef text = asmString.trim();
  text.consume_back(";");
  text = text.trim();
  if (text.contains(';') || text.contains('\n'))
    return std::nullopt;
  auto [opcode, rest] = text.split(' ');
  SmallVector<StringRef> parts;
  opcode.split(parts, '.');
  if (parts.size() < 2 || (parts[0] != "ld" && parts[0] != "st"))
    return std::nullopt;
  MemoryInstruction inst;
  inst.store = parts[0] == "st";
  StringRef type = parts.back();
  for (StringRef qualifier : ArrayRef(parts).drop_front().drop_back()) {
    if (qualifier == "v2" || qualifier == "v4")
      inst.lanes = qualifier == "v2" ? 2 : 4;
    else if (qualifier == "shared" || qualifier == "local" ||
             qualifier == "param" || qualifier == "const")
      return std::nullopt; // other state spaces: not a global access
  }
  if (type.size() < 2 || !StringRef("fsub").contains(type[0]) ||
      type.drop_front().getAsInteger(10, inst.bits) ||
      !llvm::is_contained({8u, 16u, 32u, 64u}, inst.bits))
    return std::nullopt;
  // Operands: "dst, [addr]" (ld) or "[addr], src" (st).
  auto [first, second] = rest.split("],");
  StringRef addressText, valuesText;
  if (inst.store) {
    addressText = first;
    valuesText = second;
  } else {
    size_t bracket = rest.find('[');
    if (bracket == StringRef::npos || !rest.trim().ends_with("]"))
      return std::nullopt;
    valuesText = rest.take_front(bracket).trim();
    if (!valuesText.consume_back(","))
      return std::nullopt;
    addressText = rest.drop_front(bracket).trim().drop_back();
  }
  addressText = addressText.trim();
  if (!addressText.consume_front("["))
    return std::nullopt;
  std::optional<unsigned> address = parseOperandRef(addressText);
  std::optional<SmallVector<unsigned>> values = parseValueList(valuesText);
  if (!address || !values || values->size() != inst.lanes)
    return std::nullopt;
  inst.address = *address;
  inst.values = std::move(*values);
  return inst;
}

/// True if `asmOp` returns a value (the importer gives `call void asm` a
/// result of type !llvm.void).
bool hasResult(LLVM::InlineAsmOp asmOp) {
  return asmOp.getNumResults() != 0 &&
         !isa<LLVM::LLVMVoidType>(asmOp.getRes().getType());
}

/// The LLVM type of one lane of `asmOp`'s result (loads).
SmallVector<Type> resultLanes(LLVM::InlineAsmOp asmOp) {
  if (!hasResult(asmOp))
    return {};
  Type type = asmOp.getRes().getType();
  if (auto aggregate = dyn_cast<LLVM::LLVMStructType>(type))
    return SmallVector<Type>(aggregate.getBody());
  return {type};
}

bool hasBits(Type type, unsigned bits) {
  return type.isIntOrFloat() && type.getIntOrFloatBitWidth() == bits;
}

/// Rewrites a recognised load or store; false (nothing changed) otherwise.
bool rewriteMemoryInstruction(LLVM::InlineAsmOp asmOp) {
  std::optional<MemoryInstruction> inst =
      parseMemoryInstruction(asmOp.getAsmString());
  if (!inst)
    return false;
  OpBuilder b(asmOp);
  Location loc = asmOp.getLoc();
  unsigned results = inst->store ? 0 : inst->lanes;
  // Operand numbering: outputs first, then inputs.
  auto input = [&](unsigned ref) -> Value {
    if (ref < results || ref - results >= asmOp.getNumOperands())
      return {};
    return asmOp.getOperand(ref - results);
  };
  Value pointer = input(inst->address);
  if (!pointer || !isa<LLVM::LLVMPointerType>(pointer.getType()))
    return false;
  auto laneAddress = [&](unsigned lane, Type type) -> Value {
    if (lane == 0)
      return pointer;
    return LLVM::GEPOp::create(b, loc, pointer.getType(), type, pointer,
                               ArrayRef<LLVM::GEPArg>{int32_t(lane)});
  };
  if (inst->store) {
    SmallVector<Value> values;
    for (unsigned ref : inst->values) {
      Value v = input(ref);
      if (!v || !hasBits(v.getType(), inst->bits) ||
          (!values.empty() && v.getType() != values.front().getType()))
        return false;
      values.push_back(v);
    }
    if (hasResult(asmOp))
      return false;
    for (auto [lane, v] : llvm::enumerate(values))
      LLVM::StoreOp::create(b, loc, v, laneAddress(lane, v.getType()));
    asmOp.erase();
    return true;
  }
  SmallVector<Type> lanes = resultLanes(asmOp);
  if (lanes.size() != inst->lanes || !llvm::all_of(lanes, [&](Type t) {
        return t == lanes.front() && hasBits(t, inst->bits);
      }))
    return false;
  for (auto [lane, ref] : llvm::enumerate(inst->values))
    if (ref != lane)
      return false;
  Value result = asmOp.getRes();
  if (inst->lanes == 1) {
    result.replaceAllUsesWith(
        LLVM::LoadOp::create(b, loc, lanes.front(), pointer).getResult());
    asmOp.erase();
    return true;
  }
  // A vector's lanes are read through extractvalue.
  SmallVector<LLVM::ExtractValueOp> extracts;
  for (Operation *user : result.getUsers()) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!extract || extract.getPosition().size() != 1)
      return false;
    extracts.push_back(extract);
  }
  SmallVector<Value> loaded;
  for (unsigned lane = 0; lane < inst->lanes; ++lane)
    loaded.push_back(LLVM::LoadOp::create(b, loc, lanes[lane],
                                          laneAddress(lane, lanes[lane])));
  for (LLVM::ExtractValueOp extract : extracts) {
    extract.getResult().replaceAllUsesWith(
        loaded[extract.getPosition().front()]);
    extract.erase();
  }
  asmOp.erase();
  return true;
}

/// The conversions and moves of CUDA's cuda_fp16/cuda_bf16 headers (half
/// values are i16 bits, half2 values i32): true if `asmOp` was one and is
/// replaced by LLVM ops.
bool rewriteHalfConversion(LLVM::InlineAsmOp asmOp) {
  if (!hasResult(asmOp))
    return false;
  std::string text = normalizeInlineAsm(asmOp.getAsmString());
  StringRef constraints = asmOp.getConstraints();
  OpBuilder b(asmOp);
  Location loc = asmOp.getLoc();
  Type f16 = b.getF16Type(), bf16 = b.getBF16Type(), f32 = b.getF32Type(),
       i16 = b.getI16Type(), i32 = b.getI32Type();
  Type resultType = asmOp.getRes().getType();
  auto operand = [&](unsigned k, Type type) -> Value {
    if (k >= asmOp.getNumOperands() || asmOp.getOperand(k).getType() != type)
      return {};
    return asmOp.getOperand(k);
  };
  // The bits of a half (f16 or bf16) widened, and a float rounded to one
  // (to nearest, ties to even, as `cvt.rn` does), as conversions the AD
  // differentiates.
  auto halfToFloat = [&](Value bits16, Type half = {}) -> Value {
    return LLVM::FPExtOp::create(
        b, loc, f32, LLVM::BitcastOp::create(b, loc, half ? half : f16, bits16));
  };
  auto floatToHalf = [&](Value x, Type half = {}) -> Value {
    return LLVM::BitcastOp::create(
        b, loc, i16, LLVM::FPTruncOp::create(b, loc, half ? half : f16, x));
  };
  Value result;
  if ((text == "cvt.f32.f16 $0, $1;" || text == "cvt.f32.bf16 $0, $1;") &&
      constraints == "=f,h" && resultType == f32) {
    if (Value h = operand(0, i16))
      result = halfToFloat(h, text == "cvt.f32.bf16 $0, $1;" ? bf16 : f16);
  } else if ((text == "cvt.rn.f16.f32 $0, $1;" ||
              text == "cvt.rn.bf16.f32 $0, $1;") &&
             constraints == "=h,f" && resultType == i16) {
    if (Value x = operand(0, f32))
      result = floatToHalf(x, text == "cvt.rn.bf16.f32 $0, $1;" ? bf16 : f16);
  } else if ((text == "cvt.rn.f16x2.f32 $0, $2, $1;" ||
              text == "cvt.rn.bf16x2.f32 $0, $2, $1;") &&
             constraints == "=r,f,f" && resultType == i32) {
    // d[31:16] = cvt($2), d[15:0] = cvt($1).
    Type half = text == "cvt.rn.bf16x2.f32 $0, $2, $1;" ? bf16 : f16;
    Value lo = operand(0, f32), hi = operand(1, f32);
    if (lo && hi)
      result = joinHalves(b, loc, b.getI32Type(),
                          {floatToHalf(lo, half), floatToHalf(hi, half)});
  } else if (text == "mov.b32 $0, {$1,$2};" && constraints == "=r,h,h" &&
             resultType == i32) {
    // Two halves packed (__halves2bfloat162, __halves2half2): $1 low.
    Value lo = operand(0, i16), hi = operand(1, i16);
    if (lo && hi)
      result = joinHalves(b, loc, b.getI32Type(), {lo, hi});
  } else if (text == "mov.b32 $0, {0,$1};" && constraints == "=f,h" &&
             resultType == f32) {
    // A bf16 widened (its bits are the float's upper half).
    if (Value h = operand(0, i16))
      result = halfToFloat(h, bf16);
  } else if ((text == ".reg .f16 low,high; mov.b32 {low,high},$1; "
                      "cvt.f32.f16 $0, low;" ||
              text == ".reg .f16 low,high; mov.b32 {low,high},$1; "
                      "cvt.f32.f16 $0, high;") &&
             constraints == "=f,r" && resultType == f32) {
    if (Value packed = operand(0, i32))
      result = halfToFloat(
          extractHalf(b, loc, packed, StringRef(text).ends_with("high;")));
  }
  if (!result)
    return false;
  asmOp.getRes().replaceAllUsesWith(result);
  asmOp.erase();
  return true;
}

/// Half arithmetic of cuda_fp16/cuda_bf16 (`a * b` on `__nv_bfloat16` is
/// `fma.rn.bf16 $0,$1,$2,c` with c = -0.0 on sm_80, `mul.bf16` on sm_90):
/// per half (both halves of an x2 word), the operation in f32 between the
/// half widened and the result rounded back (an fma by a constant 1 or -1,
/// or adding -0, as the add, subtract or multiply it computes). For add, sub, mul, min, max,
/// neg and abs that is the half operation exactly (f32 has more than twice
/// a half's precision plus two bits, so rounding twice rounds once); fma
/// rounds the f32 fma to the half, which is what cuda_bf16 itself computes
/// before sm_80 (`__fmaf_ieee_rn`, then `__float2bfloat16`). True if `asmOp`
/// was one and is replaced by LLVM ops.
bool rewriteHalfArithmetic(LLVM::InlineAsmOp asmOp) {
  if (!hasResult(asmOp))
    return false;
  std::string text = normalizeInlineAsm(asmOp.getAsmString());
  StringRef rest(text);
  // A constant operand, `c`.
  std::optional<uint64_t> constant;
  if (rest.consume_front(".reg .b16 c; mov.b16 c, ") ||
      rest.consume_front(".reg .b32 c; mov.b32 c, ")) {
    auto [hex, tail] = rest.split("U; ");
    uint64_t value;
    if (!hex.consume_front("0x") || hex.getAsInteger(16, value) ||
        tail.size() == rest.size())
      return false;
    constant = value;
    rest = tail;
  }
  auto [mnemonic, operandText] = rest.split(' ');
  SmallVector<StringRef> parts;
  mnemonic.split(parts, '.');
  if (parts.size() < 2 || parts.size() > 3 ||
      (parts.size() == 3 && parts[1] != "rn"))
    return false;
  StringRef opName = parts.front(), typeName = parts.back();
  bool packed = typeName.consume_back("x2");
  if (typeName != "f16" && typeName != "bf16")
    return false;
  unsigned arity = llvm::StringSwitch<unsigned>(opName)
                       .Case("fma", 3)
                       .Cases("add", "sub", "mul", "min", "max", 2)
                       .Cases("neg", "abs", 1)
                       .Default(0);
  if (!arity || !operandText.consume_back(";"))
    return false;
  SmallVector<StringRef> names;
  operandText.split(names, ',');
  if (names.size() != arity + 1 || names.front().trim() != "$0")
    return false;
  // Each source: an asm operand's index, or -1 for the constant.
  Type word = packed ? IntegerType::get(asmOp.getContext(), 32)
                     : IntegerType::get(asmOp.getContext(), 16);
  std::string constraints = packed ? "=r" : "=h";
  SmallVector<int> sources;
  unsigned used = 0;
  for (StringRef name : ArrayRef(names).drop_front()) {
    name = name.trim();
    unsigned k;
    if (name == "c" && constant) {
      sources.push_back(-1);
    } else if (name.consume_front("$") && !name.getAsInteger(10, k) &&
               k >= 1 && k <= asmOp.getNumOperands() &&
               asmOp.getOperand(k - 1).getType() == word) {
      sources.push_back(k - 1);
      constraints += packed ? ",r" : ",h";
      ++used;
    } else {
      return false;
    }
  }
  if (asmOp.getConstraints() != constraints ||
      asmOp.getRes().getType() != word || used != asmOp.getNumOperands())
    return false;
  OpBuilder b(asmOp);
  Location loc = asmOp.getLoc();
  Type i16 = b.getI16Type(), f32 = b.getF32Type();
  Type half = typeName == "f16" ? Type(b.getF16Type()) : b.getBF16Type();
  SmallVector<Value> words;
  for (int source : sources)
    words.push_back(source < 0 ? Value(LLVM::ConstantOp::create(
                                     b, loc, word,
                                     b.getIntegerAttr(word, *constant)))
                               : asmOp.getOperand(source));
  // The constant's bits in lane `lane` (0: the low half).
  auto laneConstant = [&](unsigned lane) -> uint64_t {
    return packed && lane ? (*constant >> 16) & 0xFFFF : *constant & 0xFFFF;
  };
  uint64_t one = typeName == "f16" ? 0x3C00 : 0x3F80;
  uint64_t minusOne = one | 0x8000, minusZero = 0x8000;
  auto compute = [&](ArrayRef<Value> bits, unsigned lane) -> Value {
    SmallVector<Value> x;
    for (Value h : bits)
      x.push_back(LLVM::FPExtOp::create(
          b, loc, f32, LLVM::BitcastOp::create(b, loc, half, h)));
    // A constant operand of an fma: which source it is, and its bits.
    auto is = [&](unsigned k, uint64_t bitsOfConstant) {
      return sources[k] < 0 && laneConstant(lane) == bitsOfConstant;
    };
    Value r;
    if (opName == "fma") {
      // sm_80's bf16 `*`, `+` and `-` are fmas with a constant: a * b + -0
      // is a * b, a * 1 + c is a + c, a * -1 + c is c - a, each exact.
      if (is(2, minusZero))
        r = LLVM::FMulOp::create(b, loc, x[0], x[1]);
      else if (is(1, one) || is(0, one))
        r = LLVM::FAddOp::create(b, loc, x[is(1, one) ? 0 : 1], x[2]);
      else if (is(1, minusOne) || is(0, minusOne))
        r = LLVM::FSubOp::create(b, loc, x[2], x[is(1, minusOne) ? 0 : 1]);
      else
        r = LLVM::FMAOp::create(b, loc, x[0], x[1], x[2]);
    } else if (opName == "add") {
      r = LLVM::FAddOp::create(b, loc, x[0], x[1]);
    } else if (opName == "sub") {
      r = LLVM::FSubOp::create(b, loc, x[0], x[1]);
    } else if (opName == "mul") {
      r = LLVM::FMulOp::create(b, loc, x[0], x[1]);
    } else if (opName == "min") {
      r = LLVM::MinNumOp::create(b, loc, x[0], x[1]);
    } else if (opName == "max") {
      r = LLVM::MaxNumOp::create(b, loc, x[0], x[1]);
    } else if (opName == "neg") {
      r = LLVM::FNegOp::create(b, loc, x[0]);
    } else {
      r = LLVM::FAbsOp::create(b, loc, x[0]);
    }
    return LLVM::BitcastOp::create(b, loc, i16,
                                   LLVM::FPTruncOp::create(b, loc, half, r));
  };
  Value result;
  if (!packed) {
    result = compute(words, 0);
  } else {
    SmallVector<Value> low, high;
    for (Value w : words) {
      low.push_back(extractHalf(b, loc, w, 0));
      high.push_back(extractHalf(b, loc, w, 1));
    }
    result = joinHalves(b, loc, cast<IntegerType>(word),
                        {compute(low, 0), compute(high, 1)});
  }
  asmOp.getRes().replaceAllUsesWith(result);
  asmOp.erase();
  return true;
}

/// `mov.u32 $0, %laneid;` and `%lanemask_{eq,le,lt,ge,gt}` (cooperative
/// groups' tiles and coalesced groups): the intrinsic that reads the special
/// register, which the raise computes from the linear thread id.
bool rewriteSpecialRegister(LLVM::InlineAsmOp asmOp) {
  if (!hasResult(asmOp) || asmOp.getNumOperands() != 0 ||
      asmOp.getConstraints() != "=r" ||
      !asmOp.getRes().getType().isInteger(32))
    return false;
  std::string text = normalizeInlineAsm(asmOp.getAsmString());
  StringRef reg(text);
  if (!reg.consume_front("mov.u32 $0, %") && !reg.consume_front("mov.b32 $0, %"))
    return false;
  reg.consume_back(";");
  std::optional<StringRef> intrinsic =
      llvm::StringSwitch<std::optional<StringRef>>(reg)
          .Case("laneid", "llvm.nvvm.read.ptx.sreg.laneid")
          .Case("lanemask_eq", "llvm.nvvm.read.ptx.sreg.lanemask.eq")
          .Case("lanemask_le", "llvm.nvvm.read.ptx.sreg.lanemask.le")
          .Case("lanemask_lt", "llvm.nvvm.read.ptx.sreg.lanemask.lt")
          .Case("lanemask_ge", "llvm.nvvm.read.ptx.sreg.lanemask.ge")
          .Case("lanemask_gt", "llvm.nvvm.read.ptx.sreg.lanemask.gt")
          .Default(std::nullopt);
  if (!intrinsic)
    return false;
  OpBuilder b(asmOp);
  auto read = LLVM::CallIntrinsicOp::create(
      b, asmOp.getLoc(), asmOp.getRes().getType(),
      b.getStringAttr(*intrinsic), ValueRange{});
  asmOp.getRes().replaceAllUsesWith(read.getResult(0));
  asmOp.erase();
  return true;
}

} // namespace

std::string nabla::raise::normalizeInlineAsm(StringRef text) {
  text = text.trim();
  if (text.starts_with("{") && text.ends_with("}"))
    text = text.drop_front().drop_back();
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space) {
      if (!out.empty() && out.back() != ' ')
        out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  return out;
}

void nabla::raise::rewriteKnownInlineAsm(ModuleOp module) {
  SmallVector<LLVM::InlineAsmOp> asmOps;
  module.walk([&](LLVM::InlineAsmOp op) { asmOps.push_back(op); });
  for (LLVM::InlineAsmOp asmOp : asmOps) {
    // Pure assembly nobody reads (cooperative groups' reserved shared
    // memory offset).
    if (!asmOp.getHasSideEffects() &&
        (asmOp.getNumResults() == 0 || asmOp.getRes().use_empty())) {
      asmOp.erase();
      continue;
    }
    if (!rewriteMemoryInstruction(asmOp) && !rewriteSpecialRegister(asmOp) &&
        !rewriteShuffleAsm(asmOp) && !rewriteHalfConversion(asmOp))
      (void)rewriteHalfArithmetic(asmOp);
  }
}
