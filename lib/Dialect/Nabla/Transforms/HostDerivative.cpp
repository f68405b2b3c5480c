//===- HostDerivative.cpp - Derivatives of host functions -----------------===//
//
// `nabla.autodiff` / `nabla.fwddiff` of a host function that allocates,
// copies and launches kernels. The derivative is an ordinary host function:
//
//  Reverse mode (Enzyme's memory semantics over device buffers):
//   1. the forward sweep runs the program (every asynchronous op made
//      synchronous: program order is a valid order of the async program),
//      allocating a zeroed shadow next to every intermediate float buffer and
//      deferring its frees; before an op overwrites a buffer that a launch at
//      or before it (or in a loop around both) reads, it copies the buffer
//      into a snapshot slot (one per iteration of the enclosing loops);
//   2. the reverse sweep walks the program backwards (loops reversed, ifs
//      replayed): a launch becomes a launch of its kernel's adjoint (a
//      `nabla.kernel_adjoint` of the kernel with the activities the host's
//      buffers give it, which recomputes the kernel from its inputs), a copy
//      adds its destination's shadow into its source's and zeroes it, a
//      memset zeroes its shadow; each overwrite is undone from its snapshot
//      (before the adjoint when that kernel reads the buffer, and after it),
//      so every adjoint kernel sees the buffers as its launch did;
//   3. arguments that were restored get their final contents back, and every
//      snapshot, shadow and deferred buffer is freed.
//  Forward mode runs the program with each launch replaced by its kernel's
//  tangent kernel (`nabla.kernel_tangent`), copies and memsets mirrored on
//  the tangents.
//
//===----------------------------------------------------------------------===//

#include "HostDerivative.h"
#include "HostHelperKernels.h"
#include "KernelAdjoint.h"

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Transforms/InliningUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace nabla;

namespace {

//===----------------------------------------------------------------------===//
// What kernels and host ops do to buffers
//===----------------------------------------------------------------------===//

/// The buffer a view (or cast) of it is made from, else null.
Value getViewSource(Operation *op) {
  if (auto cast = dyn_cast<memref::CastOp>(op))
    return cast.getSource();
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  return {};
}

/// The buffer `value` views: a function argument or an allocation.
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

struct Access {
  bool reads = false, writes = false;
};

/// What the kernel does to its buffer parameter `param`, through views;
/// anything unknown (a call) reads and writes.
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

/// Inlines every call of a function with a body in `function`; calls of
/// declarations (the runner's print functions) stay.
LogicalResult inlineHostCalls(func::FuncOp function) {
  InlineEverything inliner(function.getContext());
  for (unsigned round = 0;; ++round) {
    func::CallOp call;
    func::FuncOp callee;
    function.walk([&](func::CallOp op) {
      callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          op, op.getCalleeAttr());
      if (!callee || callee.isExternal())
        return WalkResult::advance();
      call = op;
      return WalkResult::interrupt();
    });
    if (!call)
      return success();
    if (round > 1000)
      return call.emitOpError("recursive call to @")
             << call.getCallee() << " cannot be differentiated";
    if (failed(inlineCall(inliner, cloneInlinedBody, call, callee,
                          &callee.getBody())))
      return call.emitOpError("cannot be inlined for differentiation");
    call.erase();
  }
}

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

/// A write that the reverse sweep undoes: `op` overwrites `root`; its
/// snapshots (one per iteration of `loops`, outermost first) live in
/// `storage`.
struct Snapshot {
  Operation *op;
  Value root;
  SmallVector<scf::ForOp> loops;
  Value storage;
  SmallVector<Value> trips;
};

/// Values of the working copy mapped into the derivative: primal values and
/// the shadows (tangents) of buffers and their views.
struct Scope {
  IRMapping map;
  IRMapping shadows;
};

class HostDerivative {
public:
  HostDerivative(func::FuncOp work, ModuleOp module, DerivativeMode mode,
                 ArrayRef<Activity> args, bool remarks)
      : work(work), module(module), mode(mode), args(args), remarks(remarks),
        helpers(module) {}

  LogicalResult analyze();
  func::FuncOp emit(OpBuilder &builder, StringRef name, FunctionType type);

private:
  // Analysis.
  LogicalResult checkOp(Operation *op);
  LogicalResult recordBuffer(Operation *op, Value buffer);
  void findSnapshots();
  bool isShadowed(Value value) { return shadowedRoots.contains(getRoot(value)); }

  // Emission.
  void emitForwardBlock(Block &block, Scope &scope);
  void emitForwardOp(Operation *op, Scope &scope);
  void emitTangentOp(Operation *op, Scope &scope);
  void emitReverseBlock(Block &block, Scope &scope);
  void emitReverseOp(Operation *op, Scope &scope);
  void recomputeBlock(Block &block, Scope &scope);
  void cloneWithShadow(Operation *op, Scope &scope);
  void allocateSnapshots(Operation *topLevel, Scope &scope);
  Value snapshotOffset(Snapshot &snapshot, Scope &scope);
  void takeSnapshots(Operation *op, Scope &scope);
  void restore(Snapshot &snapshot, Scope &scope);
  Value createShadowAllocation(Operation *alloc, Scope &scope);
  Value flatShadow(Value value, Scope &scope, Value &count);
  SymbolRefAttr getDerivedKernel(gpu::LaunchFuncOp launch,
                                 ArrayRef<Activity> activities);
  void emitLaunch(gpu::LaunchFuncOp launch, Scope &scope, SymbolRefAttr kernel,
                  bool withShadows);
  Value tripCount(Location loc, Value lb, Value ub, Value step);

  func::FuncOp work;
  ModuleOp module;
  DerivativeMode mode;
  ArrayRef<Activity> args;
  bool remarks;
  HostHelperKernels helpers;
  OpBuilder *b = nullptr;

  /// Buffers with shadows (working copy): dup arguments and float
  /// allocations.
  DenseSet<Value> shadowedRoots;
  /// Roots launches read, with the launches; writes per op.
  DenseMap<Value, SmallVector<Operation *>> readers;
  DenseMap<Operation *, SmallVector<Value>> writes;
  DenseMap<Operation *, unsigned> order;
  std::vector<Snapshot> snapshots;
  DenseMap<Operation *, SmallVector<unsigned>> snapshotsOf;
  /// Per root: its element count (top level of the derivative).
  DenseMap<Value, Value> counts;
  /// Deferred to the end of the derivative: frees of the primal's buffers,
  /// then what the derivative allocated.
  SmallVector<Operation *> deferred;
  SmallVector<Value> temporaries;
  Scope *topScope = nullptr;
};

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

//===----------------------------------------------------------------------===//
// Emission helpers
//===----------------------------------------------------------------------===//

Value HostDerivative::tripCount(Location loc, Value lb, Value ub, Value step) {
  Value diff = arith::SubIOp::create(*b, loc, ub, lb);
  Value trips = arith::CeilDivSIOp::create(*b, loc, diff, step);
  return arith::MaxSIOp::create(*b, loc, trips,
                                arith::ConstantIndexOp::create(*b, loc, 0));
}

void HostDerivative::cloneWithShadow(Operation *op, Scope &scope) {
  Operation *clone = b->clone(*op, scope.map);
  Value source = getViewSource(op);
  if (!source || !scope.shadows.contains(source))
    return;
  IRMapping mapping = scope.map;
  mapping.map(source, scope.shadows.lookup(source));
  Operation *shadow = b->clone(*op, mapping);
  scope.shadows.map(op->getResult(0), shadow->getResult(0));
  (void)clone;
}

void HostDerivative::recomputeBlock(Block &block, Scope &scope) {
  for (Operation &op : block.without_terminator())
    if (op.getNumRegions() == 0 && isMemoryEffectFree(&op))
      cloneWithShadow(&op, scope);
}

Value HostDerivative::createShadowAllocation(Operation *alloc, Scope &scope) {
  Location loc = alloc->getLoc();
  auto type = cast<MemRefType>(alloc->getResult(0).getType());
  ValueRange dynamic;
  if (auto gpuAlloc = dyn_cast<gpu::AllocOp>(alloc))
    dynamic = gpuAlloc.getDynamicSizes();
  else if (auto hostAlloc = dyn_cast<memref::AllocOp>(alloc))
    dynamic = hostAlloc.getDynamicSizes();
  else
    dynamic = cast<memref::AllocaOp>(alloc).getDynamicSizes();
  SmallVector<Value> sizes = llvm::map_to_vector(
      dynamic, [&](Value size) { return scope.map.lookup(size); });
  auto shadow = gpu::AllocOp::create(*b, loc, type, Type(), ValueRange{},
                                     sizes, ValueRange{});
  Value count = HostHelperKernels::numElements(*b, loc, shadow.getMemref());
  helpers.zero(*b, loc,
               HostHelperKernels::flatten(*b, loc, shadow.getMemref(), count),
               count);
  temporaries.push_back(shadow.getMemref());
  return shadow.getMemref();
}

Value HostDerivative::flatShadow(Value value, Scope &scope, Value &count) {
  Location loc = value.getLoc();
  Value shadow = scope.shadows.lookup(value);
  count = HostHelperKernels::numElements(*b, loc, shadow);
  return HostHelperKernels::flatten(*b, loc, shadow, count);
}

void HostDerivative::allocateSnapshots(Operation *topLevel, Scope &scope) {
  for (Snapshot &snapshot : snapshots) {
    if (!topLevel->isAncestor(snapshot.op))
      continue;
    Location loc = snapshot.op->getLoc();
    Value root = scope.map.lookup(snapshot.root);
    Value &count = counts[snapshot.root];
    if (!count)
      count = HostHelperKernels::numElements(*b, loc, root);
    Value total = count;
    for (scf::ForOp loop : snapshot.loops) {
      Value trips = tripCount(loc, scope.map.lookup(loop.getLowerBound()),
                              scope.map.lookup(loop.getUpperBound()),
                              scope.map.lookup(loop.getStep()));
      snapshot.trips.push_back(trips);
      total = arith::MulIOp::create(*b, loc, total, trips);
    }
    auto type = cast<MemRefType>(root.getType());
    auto storageType =
        MemRefType::get({ShapedType::kDynamic}, type.getElementType());
    snapshot.storage = gpu::AllocOp::create(*b, loc, storageType, Type(),
                                            ValueRange{}, ValueRange{total},
                                            ValueRange{})
                           .getMemref();
    temporaries.push_back(snapshot.storage);
    if (remarks) {
      InFlightDiagnostic remark = snapshot.op->emitRemark()
                                  << "host adjoint keeps a copy of ";
      if (auto arg = dyn_cast<BlockArgument>(snapshot.root))
        remark << "argument #" << arg.getArgNumber();
      else
        remark << "the buffer allocated at " << snapshot.root.getLoc();
      if (type.hasStaticShape())
        remark << " (" << type.getNumElements() << " elements)";
      remark << " before this op overwrites it";
      if (!snapshot.loops.empty())
        remark << ", once per iteration of " << snapshot.loops.size()
               << " enclosing loop(s)";
      remark << ": the reverse sweep restores it for the adjoints of the "
                "launches that read it (each kernel's own values are "
                "recomputed by its adjoint)";
    }
  }
}

Value HostDerivative::snapshotOffset(Snapshot &snapshot, Scope &scope) {
  Location loc = snapshot.op->getLoc();
  Value linear = arith::ConstantIndexOp::create(*b, loc, 0);
  for (auto [loop, trips] : llvm::zip(snapshot.loops, snapshot.trips)) {
    Value iv = scope.map.lookup(loop.getInductionVar());
    Value k = arith::DivSIOp::create(
        *b, loc,
        arith::SubIOp::create(*b, loc, iv,
                              scope.map.lookup(loop.getLowerBound())),
        scope.map.lookup(loop.getStep()));
    linear = arith::AddIOp::create(
        *b, loc, arith::MulIOp::create(*b, loc, linear, trips), k);
  }
  return arith::MulIOp::create(*b, loc, linear, counts.lookup(snapshot.root));
}

void HostDerivative::takeSnapshots(Operation *op, Scope &scope) {
  for (unsigned index : snapshotsOf.lookup(op)) {
    Snapshot &snapshot = snapshots[index];
    Location loc = op->getLoc();
    Value count = counts.lookup(snapshot.root);
    Value zero = arith::ConstantIndexOp::create(*b, loc, 0);
    Value flat = HostHelperKernels::flatten(
        *b, loc, scope.map.lookup(snapshot.root), count);
    helpers.copy(*b, loc, snapshot.storage, snapshotOffset(snapshot, scope),
                 flat, zero, count);
  }
}

void HostDerivative::restore(Snapshot &snapshot, Scope &scope) {
  Location loc = snapshot.op->getLoc();
  Value count = counts.lookup(snapshot.root);
  Value zero = arith::ConstantIndexOp::create(*b, loc, 0);
  Value flat = HostHelperKernels::flatten(
      *b, loc, scope.map.lookup(snapshot.root), count);
  helpers.copy(*b, loc, flat, zero, snapshot.storage,
               snapshotOffset(snapshot, scope), count);
}

SymbolRefAttr HostDerivative::getDerivedKernel(gpu::LaunchFuncOp launch,
                                               ArrayRef<Activity> activities) {
  gpu::GPUFuncOp kernel = lookupKernel(launch);
  auto kernelModule = kernel->getParentOfType<gpu::GPUModuleOp>();
  std::string name = (mode == DerivativeMode::Reverse ? "__nabla_adjoint_"
                                                      : "__nabla_tangent_") +
                     kernel.getName().str() + "_" + activityCode(activities);
  auto reference = SymbolRefAttr::get(
      kernelModule.getNameAttr(),
      {FlatSymbolRefAttr::get(kernel.getContext(), name)});
  if (kernelModule.lookupSymbol(name))
    return reference;
  OpBuilder builder = OpBuilder::atBlockEnd(kernelModule.getBody());
  SmallVector<Attribute> attrs;
  for (Activity activity : activities)
    attrs.push_back(ActivityAttr::get(kernel.getContext(), activity));
  auto flat = FlatSymbolRefAttr::get(kernel.getContext(), name);
  auto kernelRef = FlatSymbolRefAttr::get(kernel.getNameAttr());
  if (mode == DerivativeMode::Reverse) {
    auto request = KernelAdjointOp::create(builder, launch.getLoc(), kernelRef,
                                           flat, builder.getArrayAttr(attrs),
                                           /*deterministic=*/nullptr);
    (void)expandKernelAdjoint(request, /*deterministic=*/false);
  } else {
    auto request = KernelTangentOp::create(builder, launch.getLoc(), kernelRef,
                                           flat, builder.getArrayAttr(attrs));
    (void)expandKernelTangent(request);
  }
  return reference;
}

void HostDerivative::emitLaunch(gpu::LaunchFuncOp launch, Scope &scope,
                                SymbolRefAttr kernel, bool withShadows) {
  SmallVector<Value> operands;
  for (Value operand : launch.getKernelOperands()) {
    operands.push_back(scope.map.lookup(operand));
    if (withShadows && scope.shadows.contains(operand))
      operands.push_back(scope.shadows.lookup(operand));
  }
  auto dim3 = [&](gpu::KernelDim3 dims) {
    return gpu::KernelDim3{scope.map.lookup(dims.x), scope.map.lookup(dims.y),
                           scope.map.lookup(dims.z)};
  };
  Value shared = launch.getDynamicSharedMemorySize();
  gpu::LaunchFuncOp::create(*b, launch.getLoc(), kernel,
                            dim3(launch.getGridSizeOperandValues()),
                            dim3(launch.getBlockSizeOperandValues()),
                            shared ? scope.map.lookup(shared) : Value(),
                            operands);
}

//===----------------------------------------------------------------------===//
// Forward sweep (reverse mode) and tangent program (forward mode)
//===----------------------------------------------------------------------===//

void HostDerivative::emitForwardBlock(Block &block, Scope &scope) {
  bool topLevel = block.getParentOp() == work.getOperation();
  for (Operation &op : block.without_terminator()) {
    if (topLevel)
      allocateSnapshots(&op, scope);
    if (mode == DerivativeMode::Reverse)
      emitForwardOp(&op, scope);
    else
      emitTangentOp(&op, scope);
  }
}

/// The program's ops, synchronous; returns true if `op` was handled here
/// (the structure and the ops both modes emit alike).
void HostDerivative::emitForwardOp(Operation *op, Scope &scope) {
  Location loc = op->getLoc();
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    takeSnapshots(op, scope);
    emitLaunch(launch, scope, launch.getKernel(), /*withShadows=*/false);
  } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
    takeSnapshots(op, scope);
    gpu::MemcpyOp::create(*b, loc, Type(), ValueRange{},
                          scope.map.lookup(copy.getDst()),
                          scope.map.lookup(copy.getSrc()));
  } else if (auto fill = dyn_cast<gpu::MemsetOp>(op)) {
    takeSnapshots(op, scope);
    gpu::MemsetOp::create(*b, loc, Type(), ValueRange{},
                          scope.map.lookup(fill.getDst()),
                          scope.map.lookup(fill.getValue()));
  } else if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
    auto clone = gpu::AllocOp::create(
        *b, loc, alloc.getMemref().getType(), Type(), ValueRange{},
        llvm::map_to_vector(alloc.getDynamicSizes(),
                            [&](Value v) { return scope.map.lookup(v); }),
        llvm::map_to_vector(alloc.getSymbolOperands(),
                            [&](Value v) { return scope.map.lookup(v); }),
        alloc.getHostShared());
    scope.map.map(alloc.getMemref(), clone.getMemref());
    if (shadowedRoots.contains(alloc.getMemref()))
      scope.shadows.map(alloc.getMemref(), createShadowAllocation(op, scope));
  } else if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
    b->clone(*op, scope.map);
    if (shadowedRoots.contains(op->getResult(0)))
      scope.shadows.map(op->getResult(0), createShadowAllocation(op, scope));
  } else if (isa<gpu::DeallocOp, memref::DeallocOp, gpu::HostUnregisterOp>(
                 op)) {
    // Freed at the end: the reverse sweep still reads them.
    deferred.push_back(op);
  } else if (isa<gpu::WaitOp>(op)) {
    // Synchronous already.
  } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
    auto clone = scf::ForOp::create(*b, loc, scope.map.lookup(loop.getLowerBound()),
                                    scope.map.lookup(loop.getUpperBound()),
                                    scope.map.lookup(loop.getStep()));
    Scope inner = scope;
    inner.map.map(loop.getInductionVar(), clone.getInductionVar());
    OpBuilder::InsertionGuard guard(*b);
    b->setInsertionPoint(clone.getBody()->getTerminator());
    emitForwardBlock(*loop.getBody(), inner);
  } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
    bool hasElse = !branch.getElseRegion().empty();
    auto clone = scf::IfOp::create(
        *b, loc, scope.map.lookup(branch.getCondition()), hasElse);
    OpBuilder::InsertionGuard guard(*b);
    Scope thenScope = scope;
    b->setInsertionPoint(clone.thenBlock()->getTerminator());
    emitForwardBlock(*branch.thenBlock(), thenScope);
    if (hasElse) {
      Scope elseScope = scope;
      b->setInsertionPoint(clone.elseBlock()->getTerminator());
      emitForwardBlock(*branch.elseBlock(), elseScope);
    }
  } else {
    cloneWithShadow(op, scope);
  }
}

void HostDerivative::emitTangentOp(Operation *op, Scope &scope) {
  Location loc = op->getLoc();
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    SmallVector<Activity> activities;
    for (Value operand : launch.getKernelOperands())
      activities.push_back(scope.shadows.contains(operand) ? Activity::Dup
                                                           : Activity::Const);
    if (llvm::is_contained(activities, Activity::Dup))
      emitLaunch(launch, scope, getDerivedKernel(launch, activities),
                 /*withShadows=*/true);
    else
      emitLaunch(launch, scope, launch.getKernel(), /*withShadows=*/false);
    return;
  }
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
    emitForwardOp(op, scope);
    if (!scope.shadows.contains(copy.getDst()))
      return;
    if (scope.shadows.contains(copy.getSrc())) {
      gpu::MemcpyOp::create(*b, loc, Type(), ValueRange{},
                            scope.shadows.lookup(copy.getDst()),
                            scope.shadows.lookup(copy.getSrc()));
      return;
    }
    Value count;
    Value flat = flatShadow(copy.getDst(), scope, count);
    helpers.zero(*b, loc, flat, count);
    return;
  }
  if (auto fill = dyn_cast<gpu::MemsetOp>(op)) {
    emitForwardOp(op, scope);
    if (scope.shadows.contains(fill.getDst())) {
      Value count;
      Value flat = flatShadow(fill.getDst(), scope, count);
      helpers.zero(*b, loc, flat, count);
    }
    return;
  }
  // Everything else as in the forward sweep; frees stay deferred (the
  // tangents are freed with them at the end).
  emitForwardOp(op, scope);
}

//===----------------------------------------------------------------------===//
// Reverse sweep
//===----------------------------------------------------------------------===//

void HostDerivative::emitReverseBlock(Block &block, Scope &scope) {
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(block.without_terminator())))
    emitReverseOp(&op, scope);
}

void HostDerivative::emitReverseOp(Operation *op, Scope &scope) {
  Location loc = op->getLoc();
  SmallVector<unsigned> undo = snapshotsOf.lookup(op);
  auto restoreAll = [&] {
    for (unsigned index : undo)
      restore(snapshots[index], scope);
  };
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    SmallVector<Activity> activities;
    for (Value operand : launch.getKernelOperands())
      activities.push_back(scope.shadows.contains(operand) ? Activity::Dup
                                                           : Activity::Const);
    if (!llvm::is_contained(activities, Activity::Dup)) {
      restoreAll();
      return;
    }
    // The adjoint recomputes the kernel from its inputs: the buffers it
    // reads as they were when it was launched.
    for (unsigned index : undo)
      if (llvm::is_contained(readers.lookup(snapshots[index].root), op))
        restore(snapshots[index], scope);
    emitLaunch(launch, scope, getDerivedKernel(launch, activities),
               /*withShadows=*/true);
    restoreAll();
    return;
  }
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
    if (scope.shadows.contains(copy.getDst())) {
      Value count;
      Value dst = flatShadow(copy.getDst(), scope, count);
      if (scope.shadows.contains(copy.getSrc()) &&
          isa<FloatType>(copy.getSrc().getType().getElementType())) {
        Value unused;
        Value src = flatShadow(copy.getSrc(), scope, unused);
        helpers.accumulate(*b, loc, src, dst, count);
      }
      helpers.zero(*b, loc, dst, count);
    }
    restoreAll();
    return;
  }
  if (auto fill = dyn_cast<gpu::MemsetOp>(op)) {
    if (scope.shadows.contains(fill.getDst())) {
      Value count;
      Value dst = flatShadow(fill.getDst(), scope, count);
      helpers.zero(*b, loc, dst, count);
    }
    restoreAll();
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    Value lb = scope.map.lookup(loop.getLowerBound());
    Value step = scope.map.lookup(loop.getStep());
    Value trips = tripCount(loc, lb, scope.map.lookup(loop.getUpperBound()),
                            step);
    Value zero = arith::ConstantIndexOp::create(*b, loc, 0);
    Value one = arith::ConstantIndexOp::create(*b, loc, 1);
    auto reversed = scf::ForOp::create(*b, loc, zero, trips, one);
    OpBuilder::InsertionGuard guard(*b);
    b->setInsertionPoint(reversed.getBody()->getTerminator());
    // Iteration trips - 1 - k of the forward loop.
    Value k = arith::SubIOp::create(
        *b, loc, arith::SubIOp::create(*b, loc, trips, one),
        reversed.getInductionVar());
    Value iv = arith::AddIOp::create(
        *b, loc, lb, arith::MulIOp::create(*b, loc, k, step));
    Scope inner = scope;
    inner.map.map(loop.getInductionVar(), iv);
    recomputeBlock(*loop.getBody(), inner);
    emitReverseBlock(*loop.getBody(), inner);
    return;
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    bool hasElse = !branch.getElseRegion().empty();
    auto replay = scf::IfOp::create(
        *b, loc, scope.map.lookup(branch.getCondition()), hasElse);
    OpBuilder::InsertionGuard guard(*b);
    Scope thenScope = scope;
    b->setInsertionPoint(replay.thenBlock()->getTerminator());
    recomputeBlock(*branch.thenBlock(), thenScope);
    emitReverseBlock(*branch.thenBlock(), thenScope);
    if (hasElse) {
      Scope elseScope = scope;
      b->setInsertionPoint(replay.elseBlock()->getTerminator());
      recomputeBlock(*branch.elseBlock(), elseScope);
      emitReverseBlock(*branch.elseBlock(), elseScope);
    }
    return;
  }
  // Allocations, frees, host loads and stores, prints and pure ops have no
  // adjoint.
}

//===----------------------------------------------------------------------===//
// The derivative function
//===----------------------------------------------------------------------===//

func::FuncOp HostDerivative::emit(OpBuilder &builder, StringRef name,
                                  FunctionType type) {
  b = &builder;
  Location loc = work.getLoc();
  auto derivative = func::FuncOp::create(builder, loc, name, type);
  derivative.setPrivate();
  Block *entry = derivative.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  Scope scope;
  Block &body = work.getBody().front();
  unsigned next = 0;
  for (auto [arg, activity] : llvm::zip(body.getArguments(), args)) {
    scope.map.map(arg, entry->getArgument(next++));
    if (hasShadow(activity))
      scope.shadows.map(arg, entry->getArgument(next++));
  }

  emitForwardBlock(body, scope);
  if (mode == DerivativeMode::Reverse) {
    // Arguments the reverse sweep restores get their final contents back at
    // the end (dupnoneed ones need not).
    SmallVector<std::pair<Value, Value>> finals;
    DenseSet<Value> restored;
    for (Snapshot &snapshot : snapshots) {
      auto arg = dyn_cast<BlockArgument>(snapshot.root);
      if (!arg || !restored.insert(arg).second ||
          args[arg.getArgNumber()] == Activity::DupNoNeed)
        continue;
      Value count = counts.lookup(arg);
      Value flat =
          HostHelperKernels::flatten(builder, loc, scope.map.lookup(arg), count);
      auto saved = gpu::AllocOp::create(
          builder, loc, cast<MemRefType>(flat.getType()), Type(), ValueRange{},
          ValueRange{count}, ValueRange{});
      Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
      helpers.copy(builder, loc, saved.getMemref(), zero, flat, zero, count);
      finals.push_back({flat, saved.getMemref()});
      temporaries.push_back(saved.getMemref());
    }
    emitReverseBlock(body, scope);
    for (auto [flat, saved] : finals) {
      Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
      Value count = HostHelperKernels::numElements(builder, loc, flat);
      helpers.copy(builder, loc, flat, zero, saved, zero, count);
    }
  }
  for (Operation *op : deferred) {
    if (auto free = dyn_cast<gpu::DeallocOp>(op))
      gpu::DeallocOp::create(builder, free.getLoc(), Type(), ValueRange{},
                             scope.map.lookup(free.getMemref()));
    else
      builder.clone(*op, scope.map);
  }
  for (Value temporary : temporaries)
    gpu::DeallocOp::create(builder, loc, Type(), ValueRange{}, temporary);
  func::ReturnOp::create(builder, loc);
  return derivative;
}

/// The request's callee if it is a host program, else null.
func::FuncOp getHostCallee(Operation *request) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      request, request->getAttrOfType<FlatSymbolRefAttr>("callee"));
  return callee && isHostProgram(callee) ? callee : func::FuncOp();
}

} // namespace

bool nabla::isHostProgram(func::FuncOp function) {
  if (function.isExternal() || function->getParentOfType<gpu::GPUModuleOp>())
    return false;
  SmallVector<func::FuncOp> worklist{function};
  DenseSet<Operation *> visited;
  while (!worklist.empty()) {
    func::FuncOp next = worklist.pop_back_val();
    if (!next || next.isExternal() || !visited.insert(next).second)
      continue;
    bool launches = false;
    next.walk([&](Operation *op) {
      if (isa<gpu::LaunchFuncOp, gpu::LaunchOp>(op))
        launches = true;
      else if (auto call = dyn_cast<func::CallOp>(op))
        worklist.push_back(SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr()));
    });
    if (launches)
      return true;
  }
  return false;
}

bool nabla::hostRequestsNeedOutlining(ModuleOp module) {
  bool needed = false;
  module.walk([&](Operation *op) {
    if (!isa<AutodiffOp, FwddiffOp>(op))
      return;
    if (func::FuncOp callee = getHostCallee(op))
      needed |= module
                    .walk([](gpu::LaunchOp) { return WalkResult::interrupt(); })
                    .wasInterrupted();
  });
  return needed;
}

LogicalResult nabla::expandHostRequests(ModuleOp module, bool remarks) {
  SmallVector<Operation *> requests;
  module.walk([&](Operation *op) {
    if (isa<AutodiffOp, FwddiffOp>(op) && getHostCallee(op))
      requests.push_back(op);
  });
  for (Operation *request : requests) {
    func::FuncOp callee = getHostCallee(request);
    bool reverse = isa<AutodiffOp>(request);
    DerivativeMode mode =
        reverse ? DerivativeMode::Reverse : DerivativeMode::Forward;
    SmallVector<Activity> args =
        reverse ? cast<AutodiffOp>(request).getArgumentActivities()
                : cast<FwddiffOp>(request).getArgumentActivities();
    SmallVector<Activity> rets =
        reverse ? cast<AutodiffOp>(request).getResultActivities()
                : cast<FwddiffOp>(request).getResultActivities();
    if (callee.getNumResults() != 0 || !rets.empty())
      return request->emitOpError("differentiates host function @")
             << callee.getName()
             << ", which returns values; a differentiated host function "
                "returns nothing (write results to buffers)";
    std::string name = (reverse ? "__nabla_vjp_" : "__nabla_jvp_") +
                       callee.getName().str() + "_" + activityCode(args);
    auto derivative = module.lookupSymbol<func::FuncOp>(name);
    if (!derivative) {
      OpBuilder builder(callee);
      auto work = cast<func::FuncOp>(builder.clone(*callee));
      work.setName(name + "_primal");
      llvm::scope_exit eraseWork([&] { work.erase(); });
      if (failed(inlineHostCalls(work)))
        return failure();
      HostDerivative generator(work, module, mode, args, remarks);
      if (failed(generator.analyze()))
        return failure();
      DerivativeSignature signature = DerivativeSignature::expand(
          mode, callee.getArgumentTypes(), callee.getResultTypes(), args,
          rets);
      builder.setInsertionPointAfter(callee);
      derivative = generator.emit(
          builder, name,
          FunctionType::get(module.getContext(), signature.getOperandTypes(),
                            signature.getResultTypes()));
    }
    OpBuilder builder(request);
    auto call = func::CallOp::create(builder, request->getLoc(), derivative,
                                     request->getOperands());
    request->replaceAllUsesWith(call.getResults());
    request->erase();
  }
  return success();
}
