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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace nabla {
#define GEN_PASS_DEF_DETECTLOOPLIMIT
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// The start of the record the Vulkan launcher turns into an error
/// (runtime::kLoopLimitReport).
constexpr llvm::StringLiteral kReport =
    "nabla-runtime: loop limit: the device ended a thread's loops before "
    "they were done\n";

struct DetectLoopLimit
    : public nabla::impl::DetectLoopLimitBase<DetectLoopLimit> {
  using Base::Base;

  void runOnOperation() override {
    if (threads <= 0)
      return;
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>())
      if (kernel.isKernel() && !kernel.getBody().empty())
        instrument(kernel);
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
      gpu::PrintfOp::create(inside, loc, kReport, ValueRange{});
    });
  }
};

} // namespace
