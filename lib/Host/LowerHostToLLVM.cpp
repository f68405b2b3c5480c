//===- LowerHostToLLVM.cpp - Host code to LLVM calling mgpu* --------------===//
//
// The host half of every `nabla-to-*` pipeline. It runs after the kernels
// became gpu.binary ops and lowers the rest of the module with upstream's
// conversions, in the order upstream's GPU integration tests use them:
// gpu-async-region puts every GPU op on a stream (gpu-to-llvm lowers
// allocations, copies and memsets only in their asynchronous form), then
// gpu-to-llvm, then the async runtime, then everything else to the LLVM
// dialect. Modules without GPU host code are left alone, so kernel-only
// inputs produce exactly what they did before host lowering existed.
//
//===----------------------------------------------------------------------===//

#include "nabla/Host/Passes.h"
#include "nabla/Support/OptionNames.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Async/IR/Async.h"
#include "mlir/Dialect/Async/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERHOSTTOLLVM
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

bool nabla::hasGPUHostCode(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (isa<gpu::GPUModuleOp, gpu::BinaryOp>(op))
      return WalkResult::skip();
    if (isa<gpu::GPUDialect>(op->getDialect())) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

namespace {

/// MLIR 22's mpi-to-llvm lowers mpi.comm_rank but not mpi.comm_size. For
/// MPICH (whose communicators are ints, held in an i64 by the upstream
/// lowering) it becomes a call of MPI_Comm_size through a stack slot; the
/// cast from !mpi.comm meets the upstream lowering's cast to it and both
/// fold away.
LogicalResult lowerCommSize(ModuleOp module) {
  SmallVector<mpi::CommSizeOp> sizes;
  module.walk([&](mpi::CommSizeOp op) { sizes.push_back(op); });
  if (sizes.empty())
    return success();
  FailureOr<Attribute> implementation =
      dlti::query(module, {StringRef("MPI:Implementation")});
  if (succeeded(implementation)) {
    auto name = dyn_cast<StringAttr>(*implementation);
    if (!name || name.getValue() != "MPICH")
      return sizes.front().emitOpError(
          "is lowered for MPICH only (MLIR 22's mpi-to-llvm has no pattern "
          "for it)");
  }
  MLIRContext *context = module.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i32 = builder.getI32Type();
  auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>("MPI_Comm_size");
  if (!callee)
    callee = LLVM::LLVMFuncOp::create(
        builder, module.getLoc(), "MPI_Comm_size",
        LLVM::LLVMFunctionType::get(i32, {i32, ptr}));
  for (mpi::CommSizeOp op : sizes) {
    if (op.getRetval() && !op.getRetval().use_empty())
      return op.emitOpError("with a used return value cannot be lowered");
    builder.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value handle = UnrealizedConversionCastOp::create(
                       builder, loc, builder.getI64Type(), op.getComm())
                       .getResult(0);
    Value comm = LLVM::TruncOp::create(builder, loc, i32, handle);
    Value one = LLVM::ConstantOp::create(builder, loc, builder.getI64Type(),
                                         builder.getI64IntegerAttr(1));
    Value slot = LLVM::AllocaOp::create(builder, loc, ptr, i32, one);
    LLVM::CallOp::create(builder, loc, callee, ValueRange{comm, slot});
    Value size = LLVM::LoadOp::create(builder, loc, i32, slot);
    op.getSize().replaceAllUsesWith(size);
    op.erase();
  }
  return success();
}

bool hasAsyncOps(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (isa<gpu::GPUModuleOp, gpu::BinaryOp>(op))
      return WalkResult::skip();
    if (isa<async::AsyncDialect>(op->getDialect())) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// async-to-async-runtime crashes on an async.execute that names a token or
/// value twice (`[%t, %t]`, `%v as %a, %v as %b`; found by fuzzing). Each is
/// kept once: a second block argument for the same value is replaced by the
/// first.
void deduplicateExecuteOperands(ModuleOp module) {
  module.walk([](async::ExecuteOp op) {
    SmallVector<Value> dependencies;
    for (Value token : op.getDependencies())
      if (!llvm::is_contained(dependencies, token))
        dependencies.push_back(token);
    if (dependencies.size() != op.getDependencies().size())
      op.getDependenciesMutable().assign(dependencies);
    Block &body = op.getBodyRegion().front();
    SmallVector<Value> operands(op.getBodyOperands());
    for (int i = static_cast<int>(operands.size()) - 1; i > 0; --i) {
      auto first = llvm::find(operands, operands[i]);
      if (first - operands.begin() == i)
        continue;
      body.getArgument(i).replaceAllUsesWith(
          body.getArgument(first - operands.begin()));
      body.eraseArgument(i);
      operands.erase(operands.begin() + i);
    }
    if (operands.size() != op.getBodyOperands().size())
      op.getBodyOperandsMutable().assign(operands);
  });
}

/// gpu-to-llvm lowers an asynchronous allocation, copy, memset or
/// deallocation only with exactly one dependency, and gpu-async-region adds
/// the stream's token to ops that already had their own. Each such op gets
/// one dependency: a gpu.wait async joining its (deduplicated) dependencies.
void joinAsyncDependencies(ModuleOp module) {
  module.walk([](gpu::AsyncOpInterface op) {
    if (isa<gpu::WaitOp, gpu::LaunchFuncOp>(op) || !op.getAsyncToken())
      return;
    SmallVector<Value> dependencies;
    for (Value dependency : op.getAsyncDependencies())
      if (!llvm::is_contained(dependencies, dependency))
        dependencies.push_back(dependency);
    if (dependencies.size() == 1 && op.getAsyncDependencies().size() == 1)
      return;
    OpBuilder builder(op);
    Value joined = gpu::WaitOp::create(builder, op->getLoc(),
                                       builder.getType<gpu::AsyncTokenType>(),
                                       dependencies)
                       .getAsyncToken();
    Operation *operation = op;
    unsigned count = op.getAsyncDependencies().size();
    // Async dependencies are the leading operands of every such op.
    operation->eraseOperands(0, count);
    operation->insertOperands(0, joined);
    if (auto segments = operation->getAttrOfType<DenseI32ArrayAttr>(
            "operandSegmentSizes")) {
      SmallVector<int32_t> sizes(segments.asArrayRef());
      sizes.front() = 1;
      operation->setAttr("operandSegmentSizes",
                         builder.getDenseI32ArrayAttr(sizes));
    }
  });
}

/// gpu-to-llvm lowers a host-shared allocation only synchronously (managed
/// memory is allocated outside any stream), but gpu-async-region made every
/// allocation asynchronous. Each host-shared one becomes a synchronous wait
/// for its dependencies, the synchronous allocation, and a fresh token.
void synchronizeHostSharedAllocations(ModuleOp module) {
  SmallVector<gpu::AllocOp> allocations;
  module.walk([&](gpu::AllocOp op) {
    if (op.getHostShared() && op.getAsyncToken())
      allocations.push_back(op);
  });
  for (gpu::AllocOp op : allocations) {
    OpBuilder builder(op);
    Location loc = op.getLoc();
    if (!op.getAsyncDependencies().empty())
      gpu::WaitOp::create(builder, loc, Type(), op.getAsyncDependencies());
    auto allocation = gpu::AllocOp::create(
        builder, loc, op.getMemref().getType(), Type(), ValueRange(),
        op.getDynamicSizes(), op.getSymbolOperands(), /*hostShared=*/true);
    Value token = gpu::WaitOp::create(builder, loc,
                                      builder.getType<gpu::AsyncTokenType>(),
                                      ValueRange())
                      .getAsyncToken();
    op.getMemref().replaceAllUsesWith(allocation.getMemref());
    op.getAsyncToken().replaceAllUsesWith(token);
    op.erase();
  }
}

/// The first op that the host lowering left outside the LLVM dialect (other
/// than the binaries and launches the translation to LLVM IR handles), or
/// null.
Operation *findUnloweredOp(ModuleOp module) {
  // The casts a partial conversion leaves around an op point at its
  // operands; the op itself is the better location.
  Operation *found = nullptr, *cast = nullptr;
  // Outer ops first: an unlowered op's body is no better location.
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation() ||
        isa<LLVM::LLVMDialect>(op->getDialect()) ||
        isa<gpu::BinaryOp, gpu::LaunchFuncOp>(op))
      return WalkResult::advance();
    if (isa<UnrealizedConversionCastOp>(op)) {
      if (!cast)
        cast = op;
      return WalkResult::advance();
    }
    found = op;
    return WalkResult::interrupt();
  });
  return found ? found : cast;
}

struct LowerHostToLLVM
    : public nabla::SuggestOptionNames<
          nabla::impl::LowerHostToLLVMBase<LowerHostToLLVM>> {
  using SuggestOptionNames::SuggestOptionNames;

  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, async::AsyncDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!nabla::hasGPUHostCode(module))
      return;
    if (target != "nvvm" && target != "rocdl" && target != "spirv" &&
        target != "metal") {
      module.emitError("unknown host lowering target '")
          << target << "' (expected nvvm, rocdl, spirv or metal)";
      return signalPassFailure();
    }
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      gpuModule.emitError("was not compiled to a gpu.binary before the host "
                          "code that launches it was lowered");
      return signalPassFailure();
    }

    OpPassManager prepare(ModuleOp::getOperationName());
    if (target == "spirv")
      prepare.addPass(nabla::createWrapHostObjects());
    prepare.addPass(createLowerAffinePass());
    // memref.realloc as alloc, copy and dealloc: convert-to-llvm has no
    // pattern for it.
    prepare.addPass(memref::createExpandReallocPass());
    prepare.addPass(memref::createExpandStridedMetadataPass());
    // Views with dynamic sizes (memref.collapse_shape of a memref<?x?xf32>)
    // expand to affine.apply.
    prepare.addPass(createLowerAffinePass());
    // Vector ops in host code, as upstream's GPU integration tests use them
    // (vector.print of a vector, vector.transfer_read): transfers of rank > 1
    // as loops of 1-D ones, which convert-vector-to-llvm lowers below (with
    // masks where they may read past the end).
    prepare.addPass(createConvertVectorToSCFPass());
    prepare.addPass(createSCFToControlFlowPass());
    prepare.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
    if (failed(runPipeline(prepare, module)))
      return signalPassFailure();
    synchronizeHostSharedAllocations(module);
    if (failed(lowerCommSize(module)))
      return signalPassFailure();
    joinAsyncDependencies(module);
    deduplicateExecuteOperands(module);

    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createGpuToLLVMConversionPass());
    if (hasAsyncOps(module)) {
      pm.addPass(createAsyncToAsyncRuntimePass());
      pm.addPass(createAsyncRuntimeRefCountingPass());
      pm.addPass(createAsyncRuntimeRefCountingOptPass());
      pm.addPass(createConvertAsyncToLLVMPass());
    }
    pm.addPass(createConvertVectorToLLVMPass());
    pm.addPass(createConvertToLLVMPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    // The conversions are partial: what they could not lower is reported
    // here, at its source location, instead of by the translation to LLVM
    // IR.
    if (Operation *op = findUnloweredOp(module)) {
      op->emitOpError("cannot be lowered in host code for the ")
          << target << " target";
      return signalPassFailure();
    }
  }
};

} // namespace
