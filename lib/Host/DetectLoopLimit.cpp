//===- DetectLoopLimit.cpp - Report lavapipe's end of long-running loops --===//
//
// Mesa's llvmpipe, which runs lavapipe's shaders, gives each shader
// invocation a budget of loop iterations shared by all its loops (gallivm's
// LP_MAX_TGSI_LOOP_ITERATIONS, 65535) and, once it is spent, ends every loop
// the invocation is in or enters: the kernel goes on with what its loops had
// computed so far, a wrong result with no error (a long reverse sweep stops
// part way, and the gradient misses the iterations it did not reverse).
// Each looping kernel checks that every loop of its thread left by its own
// exit: the device breaks out at a back edge, after the loop's condition
// held, so whether the loop goes on is recorded before each back edge and
// read after the loop. The record is a workgroup-memory word of the
// thread's: the compilers between here and the device (NIR, LLVM) would
// fold a private variable's value on the loop's only exit they know of. A
// thread whose loops were cut short reports it through a gpu.printf record
// the Vulkan launcher turns into an error (docs/Runtime.md, *Loop limit*).
//
//===----------------------------------------------------------------------===//

#include "nabla/Host/Passes.h"
#include "nabla/Runtime/LoopLimitReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

namespace nabla {
#define GEN_PASS_DEF_DETECTLOOPLIMIT
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

struct DetectLoopLimit
    : public nabla::impl::DetectLoopLimitBase<DetectLoopLimit> {
  using Base::Base;

  void runOnOperation() override {
    if (threads <= 0)
      return;
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>())
      if (kernel.isKernel() && !kernel.getBody().empty() &&
          !withinLimit(kernel))
        instrument(kernel);
  }

  /// The range of integer or index `v` as far as constants, the launch's
  /// ids and sizes (never negative) and integer arithmetic on them tell
  /// (a tree's `2 * s0`, a trip count's `select(lb < ub, ceildiv(ub - lb,
  /// step), 0)` that nothing folded yet); a bound is unknown when unset.
  struct Range {
    std::optional<int64_t> lo, hi;
  };
  static Range rangeOf(Value v, int depth = 0) {
    constexpr int64_t kHuge = int64_t(1) << 40;
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return {c, c};
    Operation *def = v.getDefiningOp();
    if (!def || depth > 12)
      return {};
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::GlobalIdOp, gpu::LaneIdOp,
            gpu::SubgroupIdOp>(def))
      return {0, std::nullopt};
    if (isa<gpu::BlockDimOp, gpu::GridDimOp>(def))
      return {1, std::nullopt};
    if (auto select = dyn_cast<arith::SelectOp>(def)) {
      Range a = rangeOf(select.getTrueValue(), depth + 1);
      Range b = rangeOf(select.getFalseValue(), depth + 1);
      Range r;
      if (a.lo && b.lo)
        r.lo = std::min(*a.lo, *b.lo);
      if (a.hi && b.hi)
        r.hi = std::max(*a.hi, *b.hi);
      return r;
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
            arith::ExtSIOp>(def))
      return rangeOf(def->getOperand(0), depth + 1);
    if (def->getNumOperands() != 2)
      return {};
    Range x = rangeOf(def->getOperand(0), depth + 1);
    Range y = rangeOf(def->getOperand(1), depth + 1);
    auto fits = [&](std::optional<int64_t> b) {
      return b && *b >= -kHuge && *b <= kHuge;
    };
    auto both = [&](std::optional<int64_t> a, std::optional<int64_t> b,
                    auto f) -> std::optional<int64_t> {
      if (!fits(a) || !fits(b))
        return std::nullopt;
      return f(*a, *b);
    };
    bool nonNegative = x.lo && *x.lo >= 0 && y.lo && *y.lo >= 0;
    if (isa<arith::AddIOp>(def))
      return {both(x.lo, y.lo, std::plus<int64_t>()),
              both(x.hi, y.hi, std::plus<int64_t>())};
    if (isa<arith::SubIOp>(def))
      return {both(x.lo, y.hi, std::minus<int64_t>()),
              both(x.hi, y.lo, std::minus<int64_t>())};
    if (!nonNegative)
      return {};
    if (isa<arith::MulIOp>(def))
      return {both(x.lo, y.lo, std::multiplies<int64_t>()),
              both(x.hi, y.hi, std::multiplies<int64_t>())};
    if (isa<arith::DivUIOp>(def))
      return {0,
              x.hi ? std::optional<int64_t>(*x.hi / std::max<int64_t>(*y.lo, 1))
                   : std::nullopt};
    if (isa<arith::RemUIOp>(def))
      return {0, y.hi ? std::optional<int64_t>(*y.hi) : x.hi};
    if (isa<arith::ShRUIOp>(def))
      return {0, x.hi};
    if (isa<arith::ShLIOp>(def) && y.hi && *y.hi < 24)
      return {0, x.hi && *x.hi <= kHuge ? std::optional<int64_t>(*x.hi << *y.hi)
                                        : std::nullopt};
    if (isa<arith::MinUIOp, arith::MinSIOp>(def))
      return {std::min(*x.lo, *y.lo),
              x.hi && y.hi ? std::optional<int64_t>(std::min(*x.hi, *y.hi))
                           : (x.hi ? x.hi : y.hi)};
    return {};
  }

  /// At most how many iterations `op` runs per execution: an scf.for whose
  /// upper bound has a known maximum and lower bound a known minimum, with a
  /// positive step (at least 1 when not constant); none otherwise.
  static std::optional<int64_t> tripBound(Operation *op) {
    auto forOp = dyn_cast<scf::ForOp>(op);
    if (!forOp)
      return std::nullopt;
    std::optional<int64_t> ub = rangeOf(forOp.getUpperBound()).hi;
    std::optional<int64_t> lb = rangeOf(forOp.getLowerBound()).lo;
    std::optional<int64_t> step = getConstantIntValue(forOp.getStep());
    if (!ub || !lb || (step && *step <= 0))
      return std::nullopt;
    // An unsigned loop reads a negative bound as a huge one.
    if (forOp.getUnsignedCmp() && (*ub < 0 || *lb < 0))
      return std::nullopt;
    int64_t span = *ub - *lb;
    if (span <= 0)
      return 0;
    return llvm::divideCeil(span, step ? *step : 1);
  }

  /// True if every loop of `kernel` has a trip bound and their iterations,
  /// nested counts multiplied, add up to less than `limit` (llvmpipe counts
  /// the iterations of all loops of an invocation together).
  bool withinLimit(gpu::GPUFuncOp kernel) {
    if (limit <= 0)
      return false;
    int64_t total = 0;
    WalkResult walk = kernel.walk([&](Operation *op) {
      if (!isa<scf::ForOp, scf::WhileOp>(op))
        return WalkResult::advance();
      int64_t runs = 1;
      for (Operation *at = op; at && at != kernel; at = at->getParentOp()) {
        if (!isa<scf::ForOp, scf::WhileOp>(at))
          continue;
        std::optional<int64_t> bound = tripBound(at);
        if (!bound ||
            llvm::MulOverflow(runs, std::max<int64_t>(*bound, 1), runs))
          return WalkResult::interrupt();
      }
      if (llvm::AddOverflow(total, runs, total) || total >= limit)
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return !walk.wasInterrupted();
  }

  static Value constant(OpBuilder &b, Location loc, int32_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
  }

  /// Records before each back edge whether the loop goes on, in the
  /// thread's workgroup word, and marks the thread (a private flag) when a
  /// loop was left with it set: the device ended the loop.
  void instrument(gpu::GPUFuncOp kernel) {
    SmallVector<Operation *> loops;
    kernel.walk([&](Operation *op) {
      if (isa<scf::ForOp, scf::WhileOp>(op))
        loops.push_back(op);
    });
    if (loops.empty())
      return;
    int64_t count = threads;
    if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize()) {
      count = 1;
      for (int32_t extent : *known)
        count *= extent;
    }
    Location loc = kernel.getLoc();
    MLIRContext *context = kernel.getContext();
    auto workgroup = gpu::AddressSpaceAttr::get(context,
                                                gpu::AddressSpace::Workgroup);
    Value words = kernel.addWorkgroupAttribution(
        MemRefType::get({count}, IntegerType::get(context, 32),
                        MemRefLayoutAttrInterface(), workgroup),
        loc);
    OpBuilder entry = OpBuilder::atBlockBegin(&kernel.getBody().front());
    // The thread's word: its linear id in the block.
    Value x = gpu::ThreadIdOp::create(entry, loc, gpu::Dimension::x);
    Value y = gpu::ThreadIdOp::create(entry, loc, gpu::Dimension::y);
    Value z = gpu::ThreadIdOp::create(entry, loc, gpu::Dimension::z);
    Value dx = gpu::BlockDimOp::create(entry, loc, gpu::Dimension::x);
    Value dy = gpu::BlockDimOp::create(entry, loc, gpu::Dimension::y);
    Value own = arith::AddIOp::create(
        entry, loc,
        arith::MulIOp::create(
            entry, loc,
            arith::AddIOp::create(entry, loc,
                                  arith::MulIOp::create(entry, loc, z, dy), y),
            dx),
        x);
    Value cut = memref::AllocaOp::create(
        entry, loc, MemRefType::get({1}, entry.getI32Type()));
    Value zeroIndex = arith::ConstantIndexOp::create(entry, loc, 0);
    memref::StoreOp::create(entry, loc, constant(entry, loc, 0), cut,
                            zeroIndex);
    auto record = [&](OpBuilder &b, Value goesOn) {
      memref::StoreOp::create(
          b, loc, arith::ExtUIOp::create(b, loc, b.getI32Type(), goesOn), words,
          own);
    };
    for (Operation *loop : loops) {
      OpBuilder before(loop);
      memref::StoreOp::create(before, loc, constant(before, loc, 0), words,
                              own);
      if (auto forOp = dyn_cast<scf::ForOp>(loop)) {
        // Before the yield: whether the next index is below the bound.
        OpBuilder end(forOp.getBody()->getTerminator());
        Value next = arith::AddIOp::create(end, loc, forOp.getInductionVar(),
                                           forOp.getStep());
        record(end, arith::CmpIOp::create(
                        end, loc,
                        forOp.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                               : arith::CmpIPredicate::slt,
                        next, forOp.getUpperBound()));
      } else {
        scf::ConditionOp condition =
            cast<scf::WhileOp>(loop).getConditionOp();
        OpBuilder end(condition);
        record(end, condition.getCondition());
      }
      OpBuilder after(loop->getBlock(), ++Block::iterator(loop));
      Value held = memref::LoadOp::create(after, loc, words, own);
      memref::StoreOp::create(
          after, loc,
          arith::OrIOp::create(
              after, loc, memref::LoadOp::create(after, loc, cut, zeroIndex),
              held),
          cut, zeroIndex);
    }
    kernel.walk([&](gpu::ReturnOp ret) {
      OpBuilder at(ret);
      Value reached = arith::CmpIOp::create(
          at, loc, arith::CmpIPredicate::ne,
          memref::LoadOp::create(at, loc, cut, zeroIndex),
          constant(at, loc, 0));
      auto ifOp = scf::IfOp::create(at, loc, reached,
                                    /*withElseRegion=*/false);
      OpBuilder inside = ifOp.getThenBodyBuilder();
      gpu::PrintfOp::create(inside, loc, nabla::runtime::kLoopLimitRecord,
                            ValueRange{});
    });
  }
};

} // namespace
