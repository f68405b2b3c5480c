//===- ExclusiveAccess.cpp - Which threads can meet at one element --------===//
//
// Proofs that an access (a store, or a load whose adjoint is accumulated)
// reaches an element no other thread of the launch reaches through it: the
// reverse sweep may then read-and-zero or load-add-store a shadow element
// plainly. Anything unproven keeps an atomic (an exchange with zero for a
// store's adjoint, an add for a load's), because several threads storing to
// one element -- every lane of a warp writing the warp's sum to
// `shared[warp]` -- must give the element's adjoint to exactly one of them.
//
// An access is exclusive when, along every launch dimension, the threads
// that execute it at one element differ in nothing: a dimension is covered
// when an index is an injective function of the thread's id along it
// (thread id, global id, `block id * block size + thread id`, plus an offset
// uniform across the threads that may collide, times a non-zero constant or shifted left) or
// when an enclosing `scf.if` lets one thread through (`thread id == uniform`).
// Dimensions left uncovered must have size one, which is checked when the
// kernel runs. A derivative function's own integer arguments are uniform
// when its request passes values uniform across the grid (uniformOperands:
// a buffer's offset of 0, a kernel's scalar parameter), which the request
// records in the derivative's name.
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"


#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nabla;

namespace {

/// The launch dimensions along which a value identifies the thread.
struct Coverage {
  bool thread[3] = {false, false, false}; // within the block
  bool block[3] = {false, false, false};  // across blocks

  void merge(const Coverage &other) {
    for (int d = 0; d < 3; ++d) {
      thread[d] |= other.thread[d];
      block[d] |= other.block[d];
    }
  }
  bool any() const {
    for (int d = 0; d < 3; ++d)
      if (thread[d] || block[d])
        return true;
    return false;
  }
};

unsigned dimensionIndex(gpu::Dimension d) { return static_cast<unsigned>(d); }

} // namespace

Value nabla::stripIntegerCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// A constant every value of `v` is a multiple of, apart from uniform
/// addends (products and left shifts by constants); 1 when none is known.
static int64_t strideOf(Value v, bool perBlock,
                        function_ref<bool(Value, bool)> isUniform) {
  v = stripIntegerCasts(v);
  APInt c;
  if (auto mul = v.getDefiningOp<arith::MulIOp>()) {
    if (matchPattern(mul.getRhs(), m_ConstantInt(&c)) ||
        matchPattern(mul.getLhs(), m_ConstantInt(&c)))
      return c.isZero() ? 1 : std::abs(c.getSExtValue());
  }
  if (auto shift = v.getDefiningOp<arith::ShLIOp>())
    if (matchPattern(shift.getRhs(), m_ConstantInt(&c)) && c.ult(62))
      return int64_t(1) << c.getZExtValue();
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    if (isUniform(add.getRhs(), perBlock))
      return strideOf(add.getLhs(), perBlock, isUniform);
    if (isUniform(add.getLhs(), perBlock))
      return strideOf(add.getRhs(), perBlock, isUniform);
  }
  return 1;
}

/// The number of values `v` takes, when it is an `scf.for` induction
/// variable with constant bounds and step (or a constant: one).
static std::optional<int64_t> valueCount(Value v) {
  v = stripIntegerCasts(v);
  if (matchPattern(v, m_Constant()))
    return 1;
  auto loop = scf::getForInductionVarOwner(v);
  APInt lb, ub, step;
  if (!loop || !matchPattern(loop.getLowerBound(), m_ConstantInt(&lb)) ||
      !matchPattern(loop.getUpperBound(), m_ConstantInt(&ub)) ||
      !matchPattern(loop.getStep(), m_ConstantInt(&step)) ||
      !step.isStrictlyPositive())
    return std::nullopt;
  return std::max<int64_t>(ub.getSExtValue() - lb.getSExtValue(), 0);
}

/// True if `step` is the launch's extent along the dimensions `c` covers
/// (one dimension): `block_dim` for a thread id, `grid_dim` for a block id,
/// their product for a global id. A loop starting at such an id and
/// stepping by that extent (CUDA's block- and grid-stride loops) visits
/// values no other thread visits.
static bool isStrideOfCoverage(Value step, const Coverage &c) {
  step = stripIntegerCasts(step);
  int covered = -1;
  for (int d = 0; d < 3; ++d)
    if (c.thread[d] || c.block[d]) {
      if (covered >= 0)
        return false;
      covered = d;
    }
  if (covered < 0)
    return false;
  auto dim = static_cast<gpu::Dimension>(covered);
  auto isBlockDim = [&](Value v) {
    auto op = stripIntegerCasts(v).getDefiningOp<gpu::BlockDimOp>();
    return op && op.getDimension() == dim;
  };
  auto isGridDim = [&](Value v) {
    auto op = stripIntegerCasts(v).getDefiningOp<gpu::GridDimOp>();
    return op && op.getDimension() == dim;
  };
  if (!c.block[covered])
    return isBlockDim(step);
  if (!c.thread[covered])
    return isGridDim(step);
  auto mul = step.getDefiningOp<arith::MulIOp>();
  return mul && ((isBlockDim(mul.getLhs()) && isGridDim(mul.getRhs())) ||
                 (isGridDim(mul.getLhs()) && isBlockDim(mul.getRhs())));
}

/// What `v` (a src value) identifies: a thread id along d covers the block's
/// d, a block id the grid's d, a global id both; sums with an offset uniform
/// across the colliding threads and products with a non-zero constant (or
/// shifts left by a constant) keep what their varying operand covers.
static Coverage coverageOf(Value v, bool perBlock,
                           function_ref<bool(Value, bool)> isUniform) {
  Coverage c;
  v = stripIntegerCasts(v);
  // A block- or grid-stride loop's counter: the induction variable, or an
  // iteration argument that starts at a thread's id and grows by the
  // launch's extent along it each iteration.
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto loop = dyn_cast_or_null<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop)
      return c;
    Value start, step;
    if (arg == loop.getInductionVar()) {
      start = loop.getLowerBound();
      step = loop.getStep();
    } else {
      unsigned i = arg.getArgNumber() - loop.getNumInductionVars();
      auto next = stripIntegerCasts(
                      loop.getBody()->getTerminator()->getOperand(i))
                      .getDefiningOp<arith::AddIOp>();
      if (!next)
        return c;
      start = loop.getInitArgs()[i];
      step = stripIntegerCasts(next.getLhs()) == arg ? next.getRhs()
             : stripIntegerCasts(next.getRhs()) == arg ? next.getLhs()
                                                        : Value();
      if (!step)
        return c;
    }
    // The start must take fewer values than the step across the threads: an
    // id itself (plus a uniform offset), not a multiple of one.
    Coverage first = coverageOf(start, perBlock, isUniform);
    return strideOf(start, perBlock, isUniform) == 1 &&
                   isStrideOfCoverage(step, first)
               ? first
               : c;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return c;
  if (auto id = dyn_cast<gpu::ThreadIdOp>(def)) {
    c.thread[dimensionIndex(id.getDimension())] = true;
    return c;
  }
  if (auto id = dyn_cast<gpu::BlockIdOp>(def)) {
    c.block[dimensionIndex(id.getDimension())] = true;
    return c;
  }
  if (auto id = dyn_cast<gpu::GlobalIdOp>(def)) {
    c.thread[dimensionIndex(id.getDimension())] = true;
    c.block[dimensionIndex(id.getDimension())] = true;
    return c;
  }
  if (auto add = dyn_cast<arith::AddIOp>(def)) {
    Value lhs = stripIntegerCasts(add.getLhs()),
          rhs = stripIntegerCasts(add.getRhs());
    // block id * block size + thread id, in either order.
    for (auto [scaled, id] : {std::pair(lhs, rhs), std::pair(rhs, lhs)}) {
      auto mul = scaled.getDefiningOp<arith::MulIOp>();
      auto thread = id.getDefiningOp<gpu::ThreadIdOp>();
      if (!mul || !thread)
        continue;
      Value a = stripIntegerCasts(mul.getLhs()),
            b = stripIntegerCasts(mul.getRhs());
      for (auto [blockId, size] : {std::pair(a, b), std::pair(b, a)}) {
        auto bid = blockId.getDefiningOp<gpu::BlockIdOp>();
        auto dim = size.getDefiningOp<gpu::BlockDimOp>();
        if (bid && dim && bid.getDimension() == thread.getDimension() &&
            dim.getDimension() == thread.getDimension()) {
          unsigned d = dimensionIndex(thread.getDimension());
          c.thread[d] = c.block[d] = true;
          return c;
        }
      }
    }
    if (isUniform(add.getRhs(), perBlock))
      return coverageOf(add.getLhs(), perBlock, isUniform);
    if (isUniform(add.getLhs(), perBlock))
      return coverageOf(add.getRhs(), perBlock, isUniform);
    // base + k, k a loop's counter over fewer values than base's stride
    // (a packed copy's `out[8 i + k]`, k < 8): distinct threads' elements
    // stay apart.
    for (auto [base, offset] : {std::pair(add.getLhs(), add.getRhs()),
                                std::pair(add.getRhs(), add.getLhs())})
      if (std::optional<int64_t> count = valueCount(offset);
          count && *count <= strideOf(base, perBlock, isUniform))
        return coverageOf(base, perBlock, isUniform);
    return c;
  }
  if (auto sub = dyn_cast<arith::SubIOp>(def)) {
    if (isUniform(sub.getRhs(), perBlock))
      return coverageOf(sub.getLhs(), perBlock, isUniform);
    return c;
  }
  if (auto mul = dyn_cast<arith::MulIOp>(def)) {
    APInt factor;
    if (matchPattern(mul.getRhs(), m_ConstantInt(&factor)) && !factor.isZero())
      return coverageOf(mul.getLhs(), perBlock, isUniform);
    if (matchPattern(mul.getLhs(), m_ConstantInt(&factor)) && !factor.isZero())
      return coverageOf(mul.getRhs(), perBlock, isUniform);
  }
  // x << c, what clang makes of `tid * 8` (a packed access's base): a
  // product with 2^c, injective while it does not overflow, as the product.
  if (auto shift = dyn_cast<arith::ShLIOp>(def)) {
    APInt amount;
    unsigned width = shift.getType().isIndex()
                         ? IndexType::kInternalStorageBitWidth
                         : shift.getType().getIntOrFloatBitWidth();
    if (matchPattern(shift.getRhs(), m_ConstantInt(&amount)) &&
        amount.ult(width))
      return coverageOf(shift.getLhs(), perBlock, isUniform);
  }
  return c;
}

/// What the conditions of the `scf.if`s around `op` (their then-branches)
/// let through: `id == uniform` admits one thread along id's dimensions
/// (conjunctions count each side).
static Coverage guardCoverage(Operation *op, bool perBlock,
                              function_ref<bool(Value, bool)> isUniform) {
  Coverage c;
  std::function<void(Value)> addCondition = [&](Value cond) {
    Operation *def = cond.getDefiningOp();
    if (auto both = dyn_cast_or_null<arith::AndIOp>(def)) {
      addCondition(both.getLhs());
      addCondition(both.getRhs());
      return;
    }
    auto cmp = dyn_cast_or_null<arith::CmpIOp>(def);
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
      return;
    if (isUniform(cmp.getRhs(), perBlock))
      c.merge(coverageOf(cmp.getLhs(), perBlock, isUniform));
    else if (isUniform(cmp.getLhs(), perBlock))
      c.merge(coverageOf(cmp.getRhs(), perBlock, isUniform));
  };
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    auto ifOp = dyn_cast<scf::IfOp>(parent);
    if (ifOp && ifOp.getThenRegion().isAncestor(op->getParentRegion()))
      addCondition(ifOp.getCondition());
    if (isa<FunctionOpInterface>(parent))
      break;
  }
  return c;
}

FailureOr<VJPEmitter::Exclusivity>
VJPEmitter::proveExclusive(Operation *access, Value memref,
                           ValueRange indices) {
  Exclusivity result;
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      cast<MemRefType>(memref.getType()).getMemorySpace());
  bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
  // Offsets may vary between blocks for workgroup memory (each block has its
  // own), not for memory the whole grid shares.
  auto uniform = [&](Value v, bool perBlock) { return isUniform(v, perBlock); };
  Coverage c;
  for (Value index : indices)
    c.merge(coverageOf(index, workgroup, uniform));
  c.merge(guardCoverage(access, workgroup, uniform));
  if (!c.any())
    return failure();
  for (int d = 0; d < 3; ++d) {
    if (!c.thread[d])
      result.unitBlockDims.push_back(static_cast<gpu::Dimension>(d));
    if (!workgroup && !c.block[d])
      result.unitGridDims.push_back(static_cast<gpu::Dimension>(d));
  }
  return result;
}

Value VJPEmitter::emitExclusivityCheck(Location loc, const Exclusivity &proof) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value result;
  auto require = [&](Value size) {
    Value unit =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one);
    result = result ? arith::AndIOp::create(b, loc, result, unit) : unit;
  };
  for (gpu::Dimension d : proof.unitBlockDims)
    require(gpu::BlockDimOp::create(b, loc, d));
  for (gpu::Dimension d : proof.unitGridDims)
    require(gpu::GridDimOp::create(b, loc, d));
  return result;
}

bool nabla::isUniformAcrossThreads(
    Value v, bool perBlock, function_ref<bool(BlockArgument)> isUniformArg) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return isUniformArg(arg);
  Operation *op = v.getDefiningOp();
  if (isa<gpu::BlockDimOp, gpu::GridDimOp>(op))
    return true;
  if (isa<gpu::BlockIdOp>(op))
    return perBlock;
  if (op->getNumRegions() || !isPure(op) ||
      !isa<arith::ArithDialect>(op->getDialect()))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    return isUniformAcrossThreads(operand, perBlock, isUniformArg);
  });
}

SmallVector<unsigned> nabla::uniformOperands(Operation *request,
                                             ArrayRef<Activity> activities) {
  auto kernel = request->getParentOfType<gpu::GPUFuncOp>();
  Block *kernelEntry =
      kernel && kernel.isKernel() ? &kernel.getBody().front() : nullptr;
  // A kernel's scalar parameters (not its attributions).
  auto isKernelScalar = [&](BlockArgument arg) {
    return arg.getOwner() == kernelEntry &&
           arg.getArgNumber() < kernel.getNumArguments() &&
           !isa<BaseMemRefType>(arg.getType());
  };
  SmallVector<unsigned> found;
  unsigned next = 0;
  for (auto [index, activity] : llvm::enumerate(activities)) {
    if (next >= request->getNumOperands())
      break;
    Value primal = request->getOperand(next++);
    if (hasShadow(activity))
      ++next;
    if (primal.getType().isIntOrIndex() &&
        isUniformAcrossThreads(primal, /*perBlock=*/false, isKernelScalar))
      found.push_back(index);
  }
  return found;
}

bool nabla::indexesMemory(Value value) {
  SmallVector<Value> work{value};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
              memref::GenericAtomicRMWOp, CallOpInterface>(user))
        return true;
      if (isa<arith::ArithDialect>(user->getDialect())) {
        llvm::append_range(work, user->getResults());
        continue;
      }
      // A branch's condition indexes nothing; a loop's bounds reach its
      // induction variable, its initial values its iteration arguments.
      if (isa<scf::IfOp>(user))
        continue;
      if (auto loop = dyn_cast<scf::ForOp>(user)) {
        unsigned n = use.getOperandNumber();
        unsigned controls = loop.getNumControlOperands();
        if (n < controls) {
          work.push_back(loop.getInductionVar());
        } else {
          work.push_back(loop.getRegionIterArgs()[n - controls]);
          work.push_back(loop.getResult(n - controls));
        }
        continue;
      }
      if (isa<scf::YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        if (isa<scf::IfOp, scf::ForOp>(parent))
          work.push_back(parent->getResult(use.getOperandNumber()));
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          work.push_back(loop.getRegionIterArgs()[use.getOperandNumber()]);
        continue;
      }
      if (user->getNumRegions() || !isMemoryEffectFree(user) ||
          user->getNumResults())
        return true;
    }
  }
  return false;
}

/// `v` as base + constant (through index casts and additions of constants).
static std::pair<Value, int64_t> splitConstant(Value v) {
  int64_t constant = 0;
  while (true) {
    v = stripIntegerCasts(v);
    auto add = v.getDefiningOp<arith::AddIOp>();
    APInt c;
    if (!add)
      break;
    if (matchPattern(add.getRhs(), m_ConstantInt(&c)))
      v = add.getLhs();
    else if (matchPattern(add.getLhs(), m_ConstantInt(&c)))
      v = add.getRhs();
    else
      break;
    constant += c.getSExtValue();
  }
  return {v, constant};
}

bool VJPEmitter::apartAcrossThreads(ValueRange a, ValueRange b,
                                    bool perBlock) {
  if (a.size() != 1 || b.size() != 1)
    return false;
  auto [baseA, offsetA] = splitConstant(a[0]);
  auto [baseB, offsetB] = splitConstant(b[0]);
  // base(t) + ca = base(t') + cb with base a multiple of S apart from
  // uniform terms: S divides cb - ca, impossible when 0 < |cb - ca| < S.
  return baseA == baseB && offsetA != offsetB &&
         std::abs(offsetA - offsetB) <
             strideOf(baseA, perBlock, [&](Value v, bool perBlock) {
               return isUniform(v, perBlock);
             });
}
