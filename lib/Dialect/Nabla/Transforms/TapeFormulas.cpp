//===- TapeFormulas.cpp - Tape sizes as formulas of a launch --------------===//
//
// See TapeFormulas.h.
//
//===----------------------------------------------------------------------===//

#include "TapeFormulas.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace nabla::tapes;

namespace {

Formula constantFormula(const std::string &bits, int64_t v) {
  return Formula{"[\"const\"," + bits + "," + std::to_string(v) + "]",
                 std::to_string(v), v};
}

unsigned bitsOf(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

/// The manifest's name and dimension of a launch builtin op.
std::optional<std::pair<const char *, gpu::Dimension>>
launchBuiltin(Operation *op) {
  if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
    return std::make_pair("thread_id", id.getDimension());
  if (auto id = dyn_cast<gpu::BlockIdOp>(op))
    return std::make_pair("block_id", id.getDimension());
  if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
    return std::make_pair("block_dim", dim.getDimension());
  if (auto dim = dyn_cast<gpu::GridDimOp>(op))
    return std::make_pair("grid_dim", dim.getDimension());
  return std::nullopt;
}

} // namespace

/// The kernel parameter `memref` is, if it is a 1-D buffer of integers.
std::optional<unsigned>
nabla::tapes::FormulaBuilder::bufferParameter(Value memref) {
  auto arg = dyn_cast<BlockArgument>(memref);
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!arg || arg.getOwner() != &kernel.getBody().front() ||
      arg.getArgNumber() >= kernel.getNumArguments() || !type ||
      type.getRank() != 1 || !type.getElementType().isSignlessInteger())
    return std::nullopt;
  return arg.getArgNumber();
}


std::optional<Formula> nabla::tapes::FormulaBuilder::compute(Value value) {
  Type type = value.getType();
  if (!type.isIntOrIndex())
    return fail(value);
  std::string bits = std::to_string(bitsOf(type));
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() != &kernel.getBody().front() ||
        arg.getArgNumber() >= kernel.getNumArguments())
      return fail(value);
    std::string k = std::to_string(arg.getArgNumber());
    return Formula{"[\"arg\"," + bits + "," + k + "]", "arg" + k};
  }
  Operation *op = value.getDefiningOp();
  // The launch's builtins: the launcher takes the largest words over the
  // grid's threads when ids appear.
  if (std::optional<std::pair<const char *, gpu::Dimension>> builtin =
          launchBuiltin(op)) {
    unsigned d = static_cast<unsigned>(builtin->second);
    static const char *const dims[] = {"x", "y", "z"};
    return Formula{"[\"" + std::string(builtin->first) + "\",64," +
                       std::to_string(d) + "]",
                   std::string(builtin->first) + "." + dims[d]};
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
      return constantFormula(bits, attr.getValue().getSExtValue());
  // The slots per execution of a growing tape: the launcher's choice.
  if (isa<nabla::TapeCapacityOp>(op))
    return Formula{"[\"capacity\",64,0]", "capacity"};
  // Elements of integer buffer parameters (ragged rows' offsets, read at
  // the entry where nothing writes them) and their sizes.
  if (isa<memref::LoadOp, memref::DimOp>(op)) {
    std::optional<unsigned> k = bufferParameter(op->getOperand(0));
    if (!k)
      return fail(value);
    std::string param = std::to_string(*k);
    if (isa<memref::DimOp>(op)) {
      APInt dim;
      if (!matchPattern(op->getOperand(1), m_ConstantInt(&dim)) ||
          !dim.isZero())
        return fail(value);
      return Formula{"[\"dim\",64," + param + "]", "dim(arg" + param + ")"};
    }
    auto load = cast<memref::LoadOp>(op);
    if (load.getIndices().size() != 1 || !type.isSignlessInteger())
      return fail(value);
    std::optional<Formula> index = build(load.getIndices()[0]);
    if (!index)
      return std::nullopt;
    return Formula{"[\"load\"," + bits + "," + param + "," + index->json +
                       "]",
                   "arg" + param + "[" + index->text + "]"};
  }
  // A value chosen by a condition (a read guarded by the buffer's size):
  // select of the yielded values.
  if (auto choice = dyn_cast<scf::IfOp>(op)) {
    if (choice.getNumResults() != 1 || choice.getElseRegion().empty())
      return fail(value);
    std::optional<Formula> condition = build(choice.getCondition());
    std::optional<Formula> then = build(choice.thenYield().getOperand(0));
    std::optional<Formula> otherwise =
        build(choice.elseYield().getOperand(0));
    if (!condition || !then || !otherwise)
      return std::nullopt;
    return Formula{"[\"select\"," + bits + "," + condition->json + "," +
                       then->json + "," + otherwise->json + "]",
                   "select(" + condition->text + ", " + then->text + ", " +
                       otherwise->text + ")"};
  }
  static const llvm::StringMap<const char *> infix = {
      {"addi", " + "}, {"subi", " - "}, {"muli", " * "},
      {"divui", " /u "}, {"divsi", " / "}, {"remui", " %u "},
      {"remsi", " % "}, {"andi", " & "}, {"ori", " | "},
      {"xori", " ^ "}, {"shli", " << "}, {"shrui", " >>u "},
      {"shrsi", " >> "}};
  static const llvm::StringSet<> calls = {
      "ceildivsi", "ceildivui", "floordivsi", "maxsi",       "minsi",
      "maxui",     "minui",     "extsi",      "extui",       "trunci",
      "index_cast", "index_castui", "select"};
  std::string name = op->getName().stripDialect().str();
  if (!isa<arith::ArithDialect>(op->getDialect()) ||
      (!infix.count(name) && !calls.contains(name) && name != "cmpi"))
    return fail(value);
  SmallVector<Formula> operands;
  for (Value operand : op->getOperands()) {
    std::optional<Formula> f = build(operand);
    if (!f)
      return std::nullopt;
    operands.push_back(*f);
  }
  std::string json = "[\"" + name + "\"," + bits;
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    std::string predicate =
        arith::stringifyCmpIPredicate(cmp.getPredicate()).str();
    json = "[\"cmpi\",1,\"" + predicate + "\"";
    for (const Formula &f : operands)
      json += "," + f.json;
    return Formula{json + "]", "(" + operands[0].text + " " + predicate +
                                   " " + operands[1].text + ")"};
  }
  // The identities the AD's trip counts are full of: x - 0, x + 0,
  // x * 1, x / 1, c - c.
  auto is = [&](unsigned i, int64_t v) {
    return operands.size() > i && operands[i].constant == v;
  };
  if ((name == "addi" || name == "subi") && is(1, 0))
    return operands[0];
  if (name == "addi" && is(0, 0))
    return operands[1];
  if ((name == "muli" || name == "divui" || name == "divsi") && is(1, 1))
    return operands[0];
  if (name == "muli" && is(0, 1))
    return operands[1];
  if (name == "subi" && operands[0].constant && operands[1].constant)
    return constantFormula(bits, *operands[0].constant -
                                     *operands[1].constant);
  for (const Formula &f : operands)
    json += "," + f.json;
  json += "]";
  if (auto it = infix.find(name); it != infix.end())
    return Formula{json, "(" + operands[0].text + it->second +
                             operands[1].text + ")"};
  // Casts between integer widths read as their operand.
  if (operands.size() == 1)
    return Formula{json, operands[0].text};
  std::string text = name + "(";
  for (auto [i, f] : llvm::enumerate(operands))
    text += (i ? ", " : "") + f.text;
  return Formula{json, text + ")"};
}


/// Clones the (pure) computation of `value` with `mapping` (the kernel's
/// parameters mapped) at `b`'s insertion point; launch builtins come from
/// `builtins` when given.
Value nabla::tapes::rematerialize(OpBuilder &b, Value value,
                                  IRMapping &mapping,
                                  BuiltinValues builtins) {
  if (Value known = mapping.lookupOrNull(value))
    return known;
  Operation *op = value.getDefiningOp();
  if (builtins)
    if (auto builtin = launchBuiltin(op)) {
      Value v = builtins(builtin->first, builtin->second);
      mapping.map(value, v);
      return v;
    }
  for (Value operand : op->getOperands())
    (void)rematerialize(b, operand, mapping, builtins);
  // A guarded read (scf.if): what its regions use from outside first.
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  for (Value used : above)
    (void)rematerialize(b, used, mapping, builtins);
  return b.clone(*op, mapping)->getResult(0);
}

/// The kernel parameters whose elements or size the computation of `value`
/// reads (memref.load, memref.dim), into `buffers`.
void nabla::tapes::collectReadBuffers(Value value, DenseSet<Value> &seen,
                                      llvm::SetVector<Value> &buffers) {
  Operation *op = value.getDefiningOp();
  if (!op || !seen.insert(value).second)
    return;
  // The op itself, or a read inside its regions (a guarded read).
  op->walk([&](Operation *inner) {
    if (isa<memref::LoadOp, memref::DimOp>(inner) &&
        isa<BlockArgument>(inner->getOperand(0)))
      buffers.insert(inner->getOperand(0));
  });
  llvm::SetVector<Value> used(op->getOperands().begin(),
                              op->getOperands().end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  for (Value v : used)
    collectReadBuffers(v, seen, buffers);
}

/// True if `value` is computed from a thread's or block's id.
bool nabla::tapes::readsIds(Value value, DenseSet<Value> &seen) {
  Operation *op = value.getDefiningOp();
  if (!op || !seen.insert(value).second)
    return false;
  if (isa<gpu::ThreadIdOp, gpu::BlockIdOp>(op))
    return true;
  // Also what its regions use (an index read under a guard).
  llvm::SetVector<Value> used(op->getOperands().begin(),
                              op->getOperands().end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  return llvm::any_of(used, [&](Value v) { return readsIds(v, seen); });
}

