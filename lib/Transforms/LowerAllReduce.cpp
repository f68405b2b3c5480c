//===- LowerAllReduce.cpp - Workgroup reductions for every target ---------===//
//
// A gpu.all_reduce is a subgroup reduction per subgroup, the partials
// exchanged through a workgroup scratch buffer of the kernel, and a
// sequential combination of those partials in subgroup order: the result is
// the same on every run and in every thread, and nothing depends on a
// particular subgroup size beyond sizing the scratch. Upstream's rewrite
// hard-codes 32 lanes and is only reachable from a test pass.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERALLREDUCE
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

struct LowerAllReduce : public nabla::impl::LowerAllReduceBase<LowerAllReduce> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    bool inDeviceFunction = false;
    WalkResult checked = module.walk([&](gpu::AllReduceOp op) {
      if (!op.getOp()) {
        op.emitOpError("with a custom combiner region is not supported; use "
                       "an `op` attribute (add, mul, min/max, and, or, xor)");
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
      DenseMap<Type, Value> scratch;
      SmallVector<gpu::AllReduceOp> reductions;
      kernel.walk([&](gpu::AllReduceOp op) { reductions.push_back(op); });
      for (gpu::AllReduceOp op : reductions) {
        Value &buffer = scratch[op.getType()];
        if (!buffer)
          buffer = addScratch(kernel, op.getType(), op.getLoc());
        lower(op, buffer);
      }
    }
  }

  /// One slot per subgroup of the largest workgroup `kernel` may have. With
  /// the subgroup builtins the device's subgroups may be narrower than
  /// `subgroupSize` (Vulkan lets a driver choose), so every thread gets one.
  Value addScratch(gpu::GPUFuncOp kernel, Type element, Location loc) {
    int64_t threads = maxWorkgroupSize;
    if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize()) {
      threads = 1;
      for (int32_t size : *known)
        threads *= size;
    }
    int64_t slots =
        subgroupBuiltins ? threads : llvm::divideCeil(threads, subgroupSize);
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

  /// (subgroup, lane, number of subgroups) of the calling thread.
  std::tuple<Value, Value, Value> subgroupIds(OpBuilder &b, Location loc) {
    if (subgroupBuiltins)
      return {gpu::SubgroupIdOp::create(b, loc, nullptr),
              gpu::LaneIdOp::create(b, loc, nullptr),
              gpu::NumSubgroupsOp::create(b, loc, nullptr)};
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
