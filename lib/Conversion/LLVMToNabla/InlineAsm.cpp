//===- InlineAsm.cpp - The inline assembly CUDA's headers emit ------------===//
//
// CUDA's headers implement cache-hinted loads and stores (`__ldcs`, `__ldcg`,
// `__ldca`, `__ldlu`, `__ldcv`, `__stcs`, `__stcg`, `__stwb`, `__stwt`, also on
// `float4`/`int2`-style vectors) as PTX inline assembly, and cooperative
// groups reads `%reserved_smem_offset_1` on sm_80 and later whether or not
// the value is used. Before planning, the raise turns each recognised
// instruction into plain LLVM loads and stores: a cache hint changes where
// the data is cached, not what is read or written, and every target has its
// own caching. An assembly block whose results are unused and that declares
// no side effects is dropped. Any other inline assembly stays, and the raise
// refuses it with a located error.
//
// Recognised, by the instruction text (one instruction, `;` optional):
//   ld[.global][.<qualifiers>][.v2|.v4].<type>  $0 | {$0, ...}, [$k]
//   st[.global][.<qualifiers>][.v2|.v4].<type>  [$k], $j | {$j, ...}
// where <type> has the width of the LLVM value type (f32 for float, b32/u32/
// s32 for i32, ...), and a vector's lanes are consecutive elements.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

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

} // namespace

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
    (void)rewriteMemoryInstruction(asmOp);
  }
}
