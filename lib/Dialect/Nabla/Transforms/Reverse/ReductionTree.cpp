//===- ReductionTree.cpp - A block's sum tree, reversed as a broadcast ----===//
//
// The reduction-tree strategy (LoopStrategies.h). The primal
//
//   for k in [0, n):  s = s_0 >> k
//     if (t < s) W[t] = W[t] + W[t + s]      // t: a thread id
//     barrier
//
// leaves in W[0] the sum of W[0 .. 2 s_0) (of the elements whose path to the
// root has a thread at every step: with T threads along t's dimension,
// element p moves to p - s at the step of stride s when p >= s, and that
// needs thread p - s < T). Every other element keeps its value or holds a
// partial sum. When W[0] alone is read after the tree (and W is a kernel
// attribution, whose shadow holds no other adjoint), the transpose of this
// linear map gives every element on a path to the root the root's adjoint
// and changes nothing else:
//
//   barrier                                  // the root's adjoint is final
//   g = dW[0]
//   for j = t; j < 2 s_0; j += T:  if (j != 0 && path(j) ends at 0) dW[j] += g
//
// Exact for every block size (the same path test the primal's guards make),
// deterministic (no atomics), and it needs no primal value, so the forward
// sweep's tree is dead when nothing else reads it (UnreadAttributions.h).
// This is the adjoint of a reduction with + in Futhark's reverse-mode rules
// (Schenck et al., "AD for an array language with nested parallelism",
// SC'22): the result's adjoint broadcast to the operands.
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace nabla;

/// The most steps a tree may have (strides 2^31 .. 1).
static constexpr int64_t kMaxTreeSteps = 32;

/// The value of index expression `v` when the loop's induction variable `iv`
/// is `ivValue`: constants, the induction variable, and integer arithmetic
/// on them.
static std::optional<int64_t> evaluate(Value v, Value iv, int64_t ivValue,
                                       int depth = 0) {
  if (v == iv)
    return ivValue;
  if (depth > 16)
    return std::nullopt;
  if (std::optional<int64_t> constant = getConstantIntValue(v))
    return constant;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
          arith::ExtSIOp, arith::TruncIOp>(def))
    return evaluate(def->getOperand(0), iv, ivValue, depth + 1);
  if (def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> x = evaluate(def->getOperand(0), iv, ivValue,
                                      depth + 1);
  std::optional<int64_t> y = evaluate(def->getOperand(1), iv, ivValue,
                                      depth + 1);
  if (!x || !y || *x < 0 || *y < 0 || *x > (int64_t(1) << 40) ||
      *y > (int64_t(1) << 40))
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return *x + *y;
  if (isa<arith::SubIOp>(def))
    return *x - *y;
  if (isa<arith::MulIOp>(def))
    return *x * *y;
  if (isa<arith::DivUIOp, arith::DivSIOp>(def))
    return *y ? std::optional<int64_t>(*x / *y) : std::nullopt;
  if (isa<arith::ShRUIOp, arith::ShRSIOp>(def))
    return *y < 63 ? std::optional<int64_t>(*x >> *y) : std::nullopt;
  if (isa<arith::ShLIOp>(def))
    return *y < 24 ? std::optional<int64_t>(*x << *y) : std::nullopt;
  return std::nullopt;
}

/// True if `user` runs after `loop` in program order (not inside it).
static bool runsAfter(Operation *user, Operation *loop) {
  for (Operation *at = loop; at && !isa<FunctionOpInterface>(at);
       at = at->getParentOp()) {
    Operation *ancestor = at->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor)
      continue;
    return ancestor != at && at->isBeforeInBlock(ancestor);
  }
  return false;
}

std::unique_ptr<ReductionTreeStrategy>
ReductionTreeStrategy::match(scf::ForOp op,
                             const llvm::DenseSet<Value> &attributions) {
  if (op.getNumResults())
    return nullptr;
  for (Operation *parent = op->getParentOp();
       parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp())
    if (isa<LoopLikeOpInterface>(parent))
      return nullptr;
  std::optional<int64_t> lb = getConstantIntValue(op.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(op.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(op.getStep());
  if (!lb || !ub || !step || *step <= 0 || *ub <= *lb ||
      (*ub - *lb + *step - 1) / *step > kMaxTreeSteps)
    return nullptr;
  int64_t steps = (*ub - *lb + *step - 1) / *step;

  // The body: memory-free ops, then `if (t < s) {...}`, then a barrier.
  scf::IfOp guard;
  Operation *last = nullptr;
  for (Operation &inner : op.getBody()->without_terminator()) {
    last = &inner;
    if (auto ifOp = dyn_cast<scf::IfOp>(inner)) {
      if (guard)
        return nullptr;
      guard = ifOp;
    } else if (!isa<gpu::BarrierOp>(inner) &&
               (inner.getNumRegions() || !isMemoryEffectFree(&inner))) {
      return nullptr;
    }
  }
  if (!guard || !last || !isa<gpu::BarrierOp>(last) ||
      !llvm::hasSingleElement(llvm::make_filter_range(
          op.getBody()->getOperations(),
          [](Operation &inner) { return isa<gpu::BarrierOp>(inner); })) ||
      guard->getNumResults() ||
      (!guard.getElseRegion().empty() &&
       !llvm::hasSingleElement(guard.getElseRegion().front())))
    return nullptr;
  auto cond = guard.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cond || (cond.getPredicate() != arith::CmpIPredicate::ult &&
                cond.getPredicate() != arith::CmpIPredicate::slt))
    return nullptr;
  Value thread = cond.getLhs(), stride = cond.getRhs();
  auto id = thread.getDefiningOp<gpu::ThreadIdOp>();
  if (!id || op->isAncestor(id))
    return nullptr;

  // The then-block: W[t] = W[t] + W[t + s].
  arith::AddIOp partnerIndex;
  arith::AddFOp sum;
  memref::StoreOp store;
  SmallVector<memref::LoadOp> loads;
  for (Operation &inner : guard.thenBlock()->without_terminator()) {
    if (auto add = dyn_cast<arith::AddIOp>(inner); add && !partnerIndex)
      partnerIndex = add;
    else if (auto add = dyn_cast<arith::AddFOp>(inner); add && !sum)
      sum = add;
    else if (auto s = dyn_cast<memref::StoreOp>(inner); s && !store)
      store = s;
    else if (auto load = dyn_cast<memref::LoadOp>(inner); load && loads.size() < 2)
      loads.push_back(load);
    else
      return nullptr;
  }
  if (!partnerIndex || !sum || !store || loads.size() != 2)
    return nullptr;
  auto isPair = [](Value a, Value b, Value x, Value y) {
    return (a == x && b == y) || (a == y && b == x);
  };
  Value buffer = store.getMemRef();
  auto type = dyn_cast<MemRefType>(buffer.getType());
  auto space = type ? dyn_cast_or_null<gpu::AddressSpaceAttr>(
                          type.getMemorySpace())
                    : nullptr;
  if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()) || !space ||
      space.getValue() != gpu::AddressSpace::Workgroup ||
      !attributions.contains(buffer) ||
      !isPair(partnerIndex.getLhs(), partnerIndex.getRhs(), thread, stride) ||
      store.getValueToStore() != sum.getResult() ||
      store.getIndices().front() != thread ||
      !isPair(sum.getLhs(), sum.getRhs(), loads[0], loads[1]))
    return nullptr;
  memref::LoadOp own = loads[0], partner = loads[1];
  if (own.getIndices().front() != thread)
    std::swap(own, partner);
  if (own.getMemRef() != buffer || partner.getMemRef() != buffer ||
      own.getIndices().front() != thread ||
      partner.getIndices().front() != partnerIndex.getResult())
    return nullptr;

  // Halving strides s_0 >> k, down to at least 1, within the buffer.
  auto plan = std::make_unique<ReductionTreeStrategy>();
  for (int64_t k = 0; k < steps; ++k) {
    std::optional<int64_t> s =
        evaluate(stride, op.getInductionVar(), *lb + k * *step);
    if (!s || *s < 1)
      return nullptr;
    plan->strides.push_back(*s);
  }
  int64_t first = plan->strides.front();
  if (!llvm::isPowerOf2_64(first) || 2 * first > type.getDimSize(0))
    return nullptr;
  for (auto [k, s] : llvm::enumerate(plan->strides))
    if (s != first >> k)
      return nullptr;

  // After the tree, W[0] alone is read (stores only take adjoints away).
  for (Operation *user : buffer.getUsers()) {
    if (op->isAncestor(user) || !runsAfter(user, op))
      continue;
    if (auto s = dyn_cast<memref::StoreOp>(user);
        s && s.getMemRef() == buffer && s.getValueToStore() != buffer)
      continue;
    auto load = dyn_cast<memref::LoadOp>(user);
    if (!load || !matchPattern(load.getIndices().front(), m_Zero()))
      return nullptr;
  }
  plan->buffer = buffer;
  plan->thread = thread;
  return plan;
}

LogicalResult ReductionTreeStrategy::forward(VJPEmitter &emitter,
                                             scf::ForOp op) {
  return emitter.forwardCheckpointedFor(op);
}

LogicalResult ReductionTreeStrategy::reverse(VJPEmitter &emitter,
                                             scf::ForOp op,
                                             AdjointScope &outer) {
  OpBuilder &b = emitter.builder();
  Location loc = op.getLoc();
  Value shadow = emitter.shadow(buffer);
  Value t = emitter.primal(thread);
  if (!shadow || !t)
    return emitter.unsupported(op);
  auto dimension = thread.getDefiningOp<gpu::ThreadIdOp>().getDimension();
  Value threads = gpu::BlockDimOp::create(b, loc, dimension);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  // Every contribution to the root's adjoint is in.
  gpu::BarrierOp::create(b, loc);
  Value seed = memref::LoadOp::create(b, loc, shadow, zero);
  Value end = arith::ConstantIndexOp::create(b, loc, 2 * strides.front());
  scf::ForOp::create(
      b, loc, t, end, threads, ValueRange{},
      [&](OpBuilder &nb, Location l, Value j, ValueRange) {
        Value position = j;
        Value reaches = arith::ConstantIntOp::create(nb, l, nb.getI1Type(), 1);
        Value yes = reaches;
        for (int64_t s : strides) {
          Value stride = arith::ConstantIndexOp::create(nb, l, s);
          Value moves = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::uge,
                                              position, stride);
          Value moved = arith::SubIOp::create(nb, l, position, stride);
          Value hasThread = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::ult, moved, threads);
          Value stays = arith::XOrIOp::create(nb, l, moves, yes);
          reaches = arith::AndIOp::create(
              nb, l, reaches, arith::OrIOp::create(nb, l, stays, hasThread));
          position = arith::SelectOp::create(nb, l, moves, moved, position);
        }
        Value atRoot = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                             position, zero);
        Value notRoot =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne, j, zero);
        Value add = arith::AndIOp::create(
            nb, l, reaches, arith::AndIOp::create(nb, l, atRoot, notRoot));
        auto ifOp = scf::IfOp::create(nb, l, add, /*withElseRegion=*/false);
        {
          OpBuilder::InsertionGuard guard(nb);
          nb.setInsertionPointToStart(ifOp.thenBlock());
          Value old = memref::LoadOp::create(nb, l, shadow, j);
          memref::StoreOp::create(
              nb, l, arith::AddFOp::create(nb, l, old, seed), shadow, j);
        }
        scf::YieldOp::create(nb, l);
      });
  (void)outer;
  return success();
}

void ReductionTreeStrategy::remark(Operation *loop, int64_t) const {
  loop->emitRemark() << "loop reversed as a reduction: a sum tree of "
                     << 2 * strides.front()
                     << " elements in workgroup memory whose root alone is "
                        "read after it; its adjoint is a broadcast of the "
                        "root's (one barrier, no atomics, no tape)";
}
