//===- HostProgram.cpp - What a host function does to its buffers ---------===//
//
// The analysis half of host-level AD: every op of the (call-inlined) host
// function is checked to be one the derivative can follow; buffers are
// traced to their roots (arguments and allocations), launches' reads and
// writes come from the kernels' uses of their parameters, and each write of
// a buffer that a launch at or before it (or in a loop around both) reads
// gets a snapshot, which the reverse sweep restores.
//
//===----------------------------------------------------------------------===//

#include "HostProgram.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace nabla::host {

//===----------------------------------------------------------------------===//
// What kernels and host ops do to buffers
//===----------------------------------------------------------------------===//

Value getViewSource(Operation *op) {
  if (auto cast = dyn_cast<memref::CastOp>(op))
    return cast.getSource();
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  return {};
}

Value getRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    Value source = getViewSource(def);
    if (!source)
      break;
    value = source;
  }
  return value;
}

bool isAllocation(Operation *op) {
  return isa_and_nonnull<gpu::AllocOp, memref::AllocOp, memref::AllocaOp>(op);
}

Access getAccess(Value param) {
  Access access;
  SmallVector<Value> worklist{param};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (getViewSource(user) == value ||
          isa<memref::ExtractStridedMetadataOp>(user)) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
        continue;
      }
      if (isa<memref::DimOp>(user))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects) {
        access.reads = access.writes = true;
        continue;
      }
      SmallVector<MemoryEffects::EffectInstance> list;
      effects.getEffectsOnValue(value, list);
      for (const MemoryEffects::EffectInstance &effect : list) {
        access.reads |= isa<MemoryEffects::Read>(effect.getEffect());
        access.writes |= isa<MemoryEffects::Write>(effect.getEffect());
      }
    }
  }
  return access;
}

gpu::GPUFuncOp lookupKernel(gpu::LaunchFuncOp launch) {
  return SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
}

LogicalResult HostDerivative::recordBuffer(Operation *op, Value buffer) {
  Value root = getRoot(buffer);
  auto arg = dyn_cast<BlockArgument>(root);
  bool isArgument = arg && arg.getOwner() == &work.getBody().front();
  if (!isArgument && !isAllocation(root.getDefiningOp()))
    return op->emitOpError("uses a buffer that host-level AD cannot trace "
                           "to an argument or an allocation of @")
           << work.getName().drop_back(strlen("_primal"));
  if (!isa<MemRefType>(root.getType()))
    return op->emitOpError("uses an unranked buffer; host-level AD needs "
                           "ranked memrefs");
  return success();
}

LogicalResult HostDerivative::checkOp(Operation *op) {
  bool topLevel = op->getParentOp() == work.getOperation();
  auto needsTopLevel = [&](StringRef what) -> LogicalResult {
    if (topLevel)
      return success();
    return op->emitOpError()
           << what << " inside a loop or branch of a differentiated host "
           << "function is not supported; move it before the loop";
  };
  auto contiguous = [&](Value buffer) -> LogicalResult {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (type && type.getLayout().isIdentity())
      return success();
    return op->emitOpError("copies or fills a buffer that is not a ranked "
                           "memref with the identity layout; host-level AD "
                           "needs whole buffers here");
  };
  // Tokens order asynchronous GPU ops; the derivative runs in program order.
  for (Value result : op->getResults())
    if (isa<gpu::AsyncTokenType>(result.getType()))
      for (Operation *user : result.getUsers())
        if (!isa<gpu::AsyncOpInterface, gpu::WaitOp>(user))
          return user->emitOpError(
              "uses a GPU token in a way host-level AD cannot follow (only "
              "GPU ops and gpu.wait may take tokens)");
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    gpu::GPUFuncOp kernel = lookupKernel(launch);
    if (!kernel)
      return op->emitOpError("launches ")
             << launch.getKernel() << ", which does not resolve to a gpu.func";
    if (launch.hasClusterSize() || launch.getAsyncObject())
      return op->emitOpError("with a cluster size or a stream object cannot "
                             "be differentiated");
    if (kernel->walk([](gpu::DynamicSharedMemoryOp) {
                return WalkResult::interrupt();
              }).wasInterrupted())
      return op->emitOpError("launches ")
             << launch.getKernel()
             << ", which uses dynamic shared memory; host-level AD of such "
                "kernels is not supported yet";
    for (auto [index, operand] : llvm::enumerate(launch.getKernelOperands())) {
      if (isa<LLVM::LLVMPointerType>(operand.getType()))
        return op->emitOpError("passes a pointer; host-level AD needs memrefs");
      if (!isa<BaseMemRefType>(operand.getType()))
        continue;
      if (failed(recordBuffer(op, operand)))
        return failure();
      Access access = getAccess(kernel.getArgument(index));
      Value root = getRoot(operand);
      if (access.reads && !llvm::is_contained(readers[root], op))
        readers[root].push_back(op);
      if (access.writes && !llvm::is_contained(writes[op], root))
        writes[op].push_back(root);
    }
    return success();
  }
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
    if (failed(recordBuffer(op, copy.getDst())) ||
        failed(recordBuffer(op, copy.getSrc())) ||
        failed(contiguous(copy.getDst())) || failed(contiguous(copy.getSrc())))
      return failure();
    writes[op].push_back(getRoot(copy.getDst()));
    return success();
  }
  if (auto fill = dyn_cast<gpu::MemsetOp>(op)) {
    if (failed(recordBuffer(op, fill.getDst())) ||
        failed(contiguous(fill.getDst())))
      return failure();
    writes[op].push_back(getRoot(fill.getDst()));
    return success();
  }
  if (isAllocation(op)) {
    if (failed(needsTopLevel("an allocation")))
      return failure();
    auto type = cast<MemRefType>(op->getResult(0).getType());
    if (isa<FloatType>(type.getElementType()) && type.getLayout().isIdentity())
      shadowedRoots.insert(op->getResult(0));
    return success();
  }
  if (isa<gpu::DeallocOp, memref::DeallocOp, gpu::HostUnregisterOp>(op))
    return needsTopLevel("a free");
  if (isa<gpu::WaitOp, gpu::HostRegisterOp, func::ReturnOp, scf::YieldOp>(op))
    return success();
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    if (failed(needsTopLevel("a host-side load")))
      return failure();
    if (isShadowed(load.getMemref()) && isa<FloatType>(load.getType()))
      return op->emitOpError(
          "reads a differentiated value on the host; host-level AD follows "
          "values through kernels only (pass it to the kernel in a buffer)");
    return success();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    if (failed(needsTopLevel("a host-side store")))
      return failure();
    if (isShadowed(store.getMemref()) ||
        readers.contains(getRoot(store.getMemref())))
      return op->emitOpError(
          "stores on the host into a buffer that kernels read or that has a "
          "shadow; host-level AD follows values through kernels only");
    return success();
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    bool reads = call.getCallee().starts_with("print");
    for (Value operand : call.getOperands())
      if (isa<BaseMemRefType>(operand.getType()) && !reads)
        return op->emitOpError("calls @")
               << call.getCallee()
               << " with a buffer; host-level AD cannot tell what it does to "
                  "it (only the runner's print functions may take buffers)";
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    if (loop.getNumResults() != 0)
      return op->emitOpError("with loop-carried values cannot be "
                             "differentiated in a host function");
    return success();
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    if (branch.getNumResults() != 0)
      return op->emitOpError("with results cannot be differentiated in a "
                             "host function");
    return success();
  }
  if (auto reduce = dyn_cast<mpi::AllReduceOp>(op)) {
    if (reduce.getOp() != mpi::MPI_ReductionOpEnum::MPI_SUM)
      return op->emitOpError("with a reduction other than MPI_SUM cannot be "
                             "differentiated yet");
    if (reduce.getRetval() && !reduce.getRetval().use_empty())
      return op->emitOpError("whose return value is used cannot be "
                             "differentiated");
    for (Value buffer : {reduce.getSendbuf(), reduce.getRecvbuf()})
      if (failed(recordBuffer(op, buffer)) ||
          !cast<MemRefType>(buffer.getType()).getLayout().isIdentity())
        return op->emitOpError("needs whole, identity-layout host buffers "
                               "to be differentiated");
    writes[op].push_back(getRoot(reduce.getRecvbuf()));
    return success();
  }
  if (isa<mpi::Barrier>(op))
    return success();
  if (op->getDialect() && op->getDialect()->getNamespace() == "mpi" &&
      !isMemoryEffectFree(op))
    return op->emitOpError("cannot be differentiated yet (host-level AD "
                           "follows mpi.allreduce with MPI_SUM)");
  if (isa<gpu::LaunchOp>(op))
    return op->emitOpError("must be outlined (gpu-kernel-outlining) before "
                           "host-level AD");
  if (op->getNumRegions() == 0 && isMemoryEffectFree(op))
    return success();
  return op->emitOpError("cannot be differentiated in a host function "
                         "(host-level AD follows kernel launches, "
                         "allocations, copies and memsets)");
}

LogicalResult HostDerivative::analyze() {
  Block &entry = work.getBody().front();
  for (auto [arg, activity] : llvm::zip(entry.getArguments(), args)) {
    if (isa<BaseMemRefType>(arg.getType())) {
      if (hasShadow(activity))
        shadowedRoots.insert(arg);
      continue;
    }
    if (activity != Activity::Const)
      return work.emitOpError("scalar argument #")
             << arg.getArgNumber()
             << " of a host function can only be const; pass a "
                "differentiated scalar in a buffer (memref<1xf32>)";
  }
  unsigned next = 0;
  WalkResult walked = work.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == work.getOperation())
      return WalkResult::advance();
    order[op] = next++;
    return failed(checkOp(op)) ? WalkResult::interrupt()
                               : WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  if (mode == DerivativeMode::Reverse)
    findSnapshots();
  // Loops around snapshots: bounds known before the outermost one.
  for (Snapshot &snapshot : snapshots)
    for (scf::ForOp loop : snapshot.loops)
      for (Value bound :
           {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
        if (bound.getParentRegion() != &work.getBody())
          return loop.emitOpError(
              "overwrites a buffer the reverse sweep needs, in a loop whose "
              "bounds depend on an enclosing loop; host-level AD sizes the "
              "copies it keeps before the outermost loop");
  return success();
}

void HostDerivative::findSnapshots() {
  auto loopsAround = [&](Operation *op) {
    SmallVector<scf::ForOp> loops;
    for (Operation *parent = op->getParentOp(); parent != work.getOperation();
         parent = parent->getParentOp())
      if (auto loop = dyn_cast<scf::ForOp>(parent))
        loops.insert(loops.begin(), loop);
    return loops;
  };
  work.walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto written = writes.find(op);
    if (written == writes.end())
      return;
    SmallVector<scf::ForOp> loops = loopsAround(op);
    for (Value root : written->second) {
      bool needed = llvm::any_of(readers.lookup(root), [&](Operation *reader) {
        return order[reader] <= order[op] ||
               llvm::any_of(loops, [&](scf::ForOp loop) {
                 return loop->isAncestor(reader);
               });
      });
      if (!needed)
        continue;
      snapshotsOf[op].push_back(snapshots.size());
      snapshots.push_back({op, root, loops, Value(), {}});
    }
  });
}

} // namespace nabla::host
