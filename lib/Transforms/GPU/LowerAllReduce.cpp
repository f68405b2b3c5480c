//===- LowerAllReduce.cpp - Workgroup reductions for every target ---------===//
//
// Where subgroups are the linear thread id divided by the subgroup size
// (CUDA warps, AMD wavefronts), a gpu.all_reduce is a subgroup reduction per
// subgroup, the partials exchanged through a workgroup scratch buffer of the
// kernel, and a sequential combination of those partials in subgroup order.
// Vulkan does not promise that layout: lavapipe splits each row of a 13x4x2
// workgroup into subgroups of 8 and 5 while reporting SubgroupId as the
// linear id divided by 8, so partials collided (found by the host-program
// all_reduce tests). With `subgroup-builtins` (SPIR-V), and for a custom
// combiner region (which no subgroup reduction takes), every thread's value
// goes into a scratch slot of its own and a tree of halving strides combines
// them, a barrier per level. Either way the result is the same on every run
// and in every thread. Upstream's rewrite hard-codes 32 lanes and is only
// reachable from a test pass.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/OptionNames.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERALLREDUCE
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

struct LowerAllReduce : public nabla::SuggestOptionNames<
                            nabla::impl::LowerAllReduceBase<LowerAllReduce>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    bool inDeviceFunction = false;
    WalkResult checked = module.walk([&](gpu::AllReduceOp op) {
      if (!op.getOp() && !op.getBody().hasOneBlock()) {
        op.emitOpError("with a multi-block combiner region is not supported; "
                       "use one block ending in gpu.yield");
        return WalkResult::interrupt();
      }
      if (!op.getType().isIntOrFloat()) {
        op.emitOpError("of a vector is not supported; reduce each element");
        return WalkResult::interrupt();
      }
      inDeviceFunction |= !op->getParentOfType<gpu::GPUFuncOp>();
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();
    // The scratch is an attribution of the kernel: reductions in device
    // functions move into their kernels first.
    if (inDeviceFunction) {
      OpPassManager inliner(gpu::GPUModuleOp::getOperationName());
      inliner.addPass(nabla::createInlineDeviceCalls());
      if (failed(runPipeline(inliner, module)))
        return signalPassFailure();
    }
    for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
      // Per element type and lowering (tree or partials).
      DenseMap<std::pair<Type, unsigned>, Value> scratch;
      SmallVector<gpu::AllReduceOp> reductions;
      kernel.walk([&](gpu::AllReduceOp op) { reductions.push_back(op); });
      for (gpu::AllReduceOp op : reductions) {
        bool tree = subgroupBuiltins || !op.getOp();
        Value &buffer = scratch[{op.getType(), unsigned(tree)}];
        if (!buffer)
          buffer = addScratch(kernel, op.getType(), op.getLoc(), tree);
        if (tree)
          lowerByTree(op, buffer);
        else
          lower(op, buffer);
      }
    }
  }

  /// Threads of the largest workgroup `kernel` may have.
  int64_t maxThreads(gpu::GPUFuncOp kernel) {
    int64_t threads = maxWorkgroupSize;
    if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize()) {
      threads = 1;
      for (int32_t size : *known)
        threads *= size;
    }
    return std::max<int64_t>(1, threads);
  }

  /// One slot per subgroup of the largest workgroup `kernel` may have, or
  /// for the tree one per thread.
  Value addScratch(gpu::GPUFuncOp kernel, Type element, Location loc,
                   bool tree) {
    int64_t threads = maxThreads(kernel);
    int64_t slots = tree ? threads : llvm::divideCeil(threads, subgroupSize);
    slots = std::max<int64_t>(1, slots);
    auto workgroup = gpu::AddressSpaceAttr::get(kernel.getContext(),
                                                gpu::AddressSpace::Workgroup);
    auto type = MemRefType::get({slots}, element, MemRefLayoutAttrInterface(),
                                workgroup);
    return kernel.addWorkgroupAttribution(type, loc);
  }

  /// The linear thread id of the workgroup (x fastest).
  Value linearThreadId(OpBuilder &b, Location loc) {
    Value linear;
    for (gpu::Dimension d :
         {gpu::Dimension::z, gpu::Dimension::y, gpu::Dimension::x}) {
      Value id = gpu::ThreadIdOp::create(b, loc, d);
      if (!linear) {
        linear = id;
        continue;
      }
      Value size = gpu::BlockDimOp::create(b, loc, d);
      linear = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, linear, size), id);
    }
    return linear;
  }

  /// `a` combined with `b` by the reduction's op or combiner region.
  Value combine(OpBuilder &b, Location loc, gpu::AllReduceOp op, Value lhs,
                Value rhs) {
    if (std::optional<gpu::AllReduceOperation> kind = op.getOp())
      return vector::makeArithReduction(
          b, loc, gpu::convertReductionKind(*kind), lhs, rhs);
    Block &body = op.getBody().front();
    IRMapping mapping;
    mapping.map(body.getArgument(0), lhs);
    mapping.map(body.getArgument(1), rhs);
    for (Operation &nested : body.without_terminator())
      b.clone(nested, mapping);
    return mapping.lookup(body.getTerminator()->getOperand(0));
  }

  /// Slot per thread, then for s = P/2, P/4, ..., 1 (P the power of two at
  /// or above the scratch size): thread t < s with t + s < threads combines
  /// slot t + s into slot t; a barrier after each level (uniform: the trip
  /// count is a constant). Slot 0 holds the result.
  void lowerByTree(gpu::AllReduceOp op, Value scratch) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value linear = linearThreadId(b, loc);
    Value threads;
    for (gpu::Dimension d :
         {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
      Value dim = gpu::BlockDimOp::create(b, loc, d);
      threads = threads ? arith::MulIOp::create(b, loc, threads, dim) : dim;
    }
    memref::StoreOp::create(b, loc, op.getValue(), scratch, linear);
    gpu::BarrierOp::create(b, loc);
    int64_t slots = cast<MemRefType>(scratch.getType()).getDimSize(0);
    int64_t levels = llvm::Log2_64_Ceil(std::max<int64_t>(2, slots));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value top = arith::ConstantIndexOp::create(b, loc, int64_t(1) << levels);
    scf::ForOp::create(
        b, loc, zero, arith::ConstantIndexOp::create(b, loc, levels), one,
        ValueRange{},
        [&](OpBuilder &nested, Location nestedLoc, Value level, ValueRange) {
          Value shift = arith::AddIOp::create(nested, nestedLoc, level, one);
          Value stride = arith::ShRUIOp::create(nested, nestedLoc, top, shift);
          Value partner =
              arith::AddIOp::create(nested, nestedLoc, linear, stride);
          Value active = arith::AndIOp::create(
              nested, nestedLoc,
              arith::CmpIOp::create(nested, nestedLoc,
                                    arith::CmpIPredicate::ult, linear, stride),
              arith::CmpIOp::create(nested, nestedLoc,
                                    arith::CmpIPredicate::ult, partner,
                                    threads));
          auto fold = scf::IfOp::create(nested, nestedLoc, active,
                                        /*withElseRegion=*/false);
          {
            OpBuilder::InsertionGuard guard(nested);
            nested.setInsertionPointToStart(fold.thenBlock());
            Value mine =
                memref::LoadOp::create(nested, nestedLoc, scratch, linear);
            Value theirs =
                memref::LoadOp::create(nested, nestedLoc, scratch, partner);
            memref::StoreOp::create(
                nested, nestedLoc, combine(nested, nestedLoc, op, mine, theirs),
                scratch, linear);
          }
          gpu::BarrierOp::create(nested, nestedLoc);
          scf::YieldOp::create(nested, nestedLoc);
        });
    Value result = memref::LoadOp::create(b, loc, scratch, zero);
    // Every thread has read the scratch before the next reduction reuses it.
    gpu::BarrierOp::create(b, loc);
    op.replaceAllUsesWith(result);
    op.erase();
  }

  /// (subgroup, lane, number of subgroups) of the calling thread: the
  /// linear thread id divided by the subgroup size.
  std::tuple<Value, Value, Value> subgroupIds(OpBuilder &b, Location loc) {
    Value size = arith::ConstantIndexOp::create(b, loc, subgroupSize);
    Value linear = linearThreadId(b, loc);
    Value threads;
    for (gpu::Dimension d :
         {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
      Value dim = gpu::BlockDimOp::create(b, loc, d);
      threads = threads ? arith::MulIOp::create(b, loc, threads, dim) : dim;
    }
    return {arith::DivUIOp::create(b, loc, linear, size),
            arith::RemUIOp::create(b, loc, linear, size),
            arith::CeilDivUIOp::create(b, loc, threads, size)};
  }

  void lower(gpu::AllReduceOp op, Value scratch) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    gpu::AllReduceOperation kind = *op.getOp();
    Value partial = gpu::SubgroupReduceOp::create(b, loc, op.getValue(), kind,
                                                  op.getUniform(),
                                                  /*cluster_size=*/nullptr);
    auto [subgroup, lane, subgroups] = subgroupIds(b, loc);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value leader =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
    auto store = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(store.thenBlock());
      memref::StoreOp::create(b, loc, partial, scratch, subgroup);
    }
    gpu::BarrierOp::create(b, loc);
    Value first = memref::LoadOp::create(b, loc, scratch, zero);
    vector::CombiningKind combining = gpu::convertReductionKind(kind);
    auto loop = scf::ForOp::create(
        b, loc, one, subgroups, one, ValueRange{first},
        [&](OpBuilder &nested, Location nestedLoc, Value k, ValueRange acc) {
          Value next = memref::LoadOp::create(nested, nestedLoc, scratch, k);
          scf::YieldOp::create(nested, nestedLoc,
                               vector::makeArithReduction(
                                   nested, nestedLoc, combining, acc[0], next));
        });
    // Every thread has read the scratch before the next reduction reuses it.
    gpu::BarrierOp::create(b, loc);
    op.replaceAllUsesWith(loop.getResult(0));
    op.erase();
  }
};

} // namespace
