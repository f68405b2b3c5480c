//===- HostSweeps.cpp - The derivative of a host function ------------------===//
//
// The emission half of host-level AD (HostDerivative.cpp says what the
// derivative does): the forward sweep (the program, synchronous, with
// snapshots and zeroed shadows), the reverse sweep (adjoint kernels in
// reverse order, copies' and memsets' adjoints, loops reversed, ifs
// replayed, overwrites undone) and forward mode's tangent program.
//
//===----------------------------------------------------------------------===//

#include "HostProgram.h"
#include "KernelAdjoint.h"

#include "DerivativeRules.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

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
// Emission helpers
//===----------------------------------------------------------------------===//

Value HostDerivative::tripCount(Location loc, Value lb, Value ub, Value step) {
  Value diff = arith::SubIOp::create(*b, loc, ub, lb);
  Value trips = arith::CeilDivSIOp::create(*b, loc, diff, step);
  return arith::MaxSIOp::create(*b, loc, trips,
                                arith::ConstantIndexOp::create(*b, loc, 0));
}

void HostDerivative::cloneWithShadow(Operation *op, Scope &scope) {
  b->clone(*op, scope.map);
  Value source = getViewSource(op);
  if (!source || !scope.shadows.contains(source))
    return;
  IRMapping mapping = scope.map;
  mapping.map(source, scope.shadows.lookup(source));
  Operation *shadow = b->clone(*op, mapping);
  scope.shadows.map(op->getResult(0), shadow->getResult(0));
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
  if (isa<gpu::AllocOp>(alloc)) {
    auto shadow = gpu::AllocOp::create(*b, loc, type, Type(), ValueRange{},
                                       sizes, ValueRange{});
    Value count = HostHelperKernels::numElements(*b, loc, shadow.getMemref());
    helpers.zero(
        *b, loc,
        HostHelperKernels::flatten(*b, loc, shadow.getMemref(), count), count);
    temporaries.push_back(shadow.getMemref());
    return shadow.getMemref();
  }
  // A host buffer's shadow is host memory too (MPI reads it), registered so
  // that kernels (the adjoints of copies) reach it; zeroed on the host.
  Value shadow = memref::AllocOp::create(*b, loc, type, sizes);
  Value count = HostHelperKernels::numElements(*b, loc, shadow);
  fillOnHost(loc, HostHelperKernels::flatten(*b, loc, shadow, count), count,
             /*addend=*/Value());
  auto unranked = UnrankedMemRefType::get(type.getElementType(),
                                          type.getMemorySpace());
  gpu::HostRegisterOp::create(
      *b, loc, memref::CastOp::create(*b, loc, unranked, shadow));
  hostTemporaries.push_back(shadow);
  return shadow;
}

void HostDerivative::fillOnHost(Location loc, Value flat, Value count,
                                Value addend) {
  Value zero = arith::ConstantIndexOp::create(*b, loc, 0);
  Value one = arith::ConstantIndexOp::create(*b, loc, 1);
  Type element = cast<MemRefType>(flat.getType()).getElementType();
  scf::ForOp::create(
      *b, loc, zero, count, one, ValueRange{},
      [&](OpBuilder &lb, Location l, Value i, ValueRange) {
        if (addend) {
          Value into = memref::LoadOp::create(lb, l, flat, i);
          Value add = memref::LoadOp::create(lb, l, addend, i);
          memref::StoreOp::create(lb, l,
                                  arith::AddFOp::create(lb, l, into, add),
                                  flat, i);
        } else {
          memref::StoreOp::create(lb, l, createZero(lb, l, element), flat, i);
        }
        scf::YieldOp::create(lb, l);
      });
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
                                           flat, /*reverse=*/nullptr,
                                           builder.getArrayAttr(attrs),
                                           /*deterministic=*/nullptr);
    if (failed(expandKernelAdjoint(request, /*deterministic=*/false)))
      generationFailed = true;
  } else {
    auto request = KernelTangentOp::create(builder, launch.getLoc(), kernelRef,
                                           flat, builder.getArrayAttr(attrs));
    if (failed(expandKernelTangent(request)))
      generationFailed = true;
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

/// The program's op `op`, synchronous, in the forward sweep (and, for the
/// structure and the ops both modes emit alike, in forward mode).
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
  } else if (isa<mpi::AllReduceOp>(op)) {
    takeSnapshots(op, scope);
    b->clone(*op, scope.map);
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
  if (auto reduce = dyn_cast<mpi::AllReduceOp>(op)) {
    // The tangent of a sum over ranks is the sum of the tangents.
    emitForwardOp(op, scope);
    if (!scope.shadows.contains(reduce.getRecvbuf()))
      return;
    Value received = scope.shadows.lookup(reduce.getRecvbuf());
    Value count = HostHelperKernels::numElements(*b, loc, received);
    if (scope.shadows.contains(reduce.getSendbuf()))
      mpi::AllReduceOp::create(*b, loc, TypeRange{},
                               scope.shadows.lookup(reduce.getSendbuf()),
                               received, reduce.getOp(),
                               scope.map.lookup(reduce.getComm()));
    else
      fillOnHost(loc, HostHelperKernels::flatten(*b, loc, received, count),
                 count, Value());
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
    // A whole buffer copied onto itself changes nothing: no adjoint (adding
    // the shadow to itself and then zeroing it would drop it).
    if (scope.shadows.contains(copy.getDst()) &&
        getRoot(copy.getDst()) != getRoot(copy.getSrc())) {
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
  if (auto reduce = dyn_cast<mpi::AllReduceOp>(op)) {
    // recv = sum over ranks of send: d send += sum over ranks of d recv,
    // then d recv = 0 (the buffers are host memory, as MPI wants).
    if (scope.shadows.contains(reduce.getRecvbuf())) {
      Value received = scope.shadows.lookup(reduce.getRecvbuf());
      auto type = cast<MemRefType>(received.getType());
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          sizes.push_back(memref::DimOp::create(*b, loc, received, d));
      Value summed = memref::AllocOp::create(*b, loc, type, sizes);
      mpi::AllReduceOp::create(*b, loc, TypeRange{}, received, summed,
                               reduce.getOp(),
                               scope.map.lookup(reduce.getComm()));
      Value count = HostHelperKernels::numElements(*b, loc, received);
      if (scope.shadows.contains(reduce.getSendbuf()))
        fillOnHost(loc,
                   HostHelperKernels::flatten(
                       *b, loc, scope.shadows.lookup(reduce.getSendbuf()),
                       count),
                   count, HostHelperKernels::flatten(*b, loc, summed, count));
      fillOnHost(loc, HostHelperKernels::flatten(*b, loc, received, count),
                 count, Value());
      memref::DeallocOp::create(*b, loc, summed);
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
  for (Value temporary : hostTemporaries) {
    auto type = cast<MemRefType>(temporary.getType());
    gpu::HostUnregisterOp::create(
        builder, loc,
        memref::CastOp::create(builder, loc,
                               UnrankedMemRefType::get(type.getElementType(),
                                                       type.getMemorySpace()),
                               temporary));
    memref::DeallocOp::create(builder, loc, temporary);
  }
  func::ReturnOp::create(builder, loc);
  return derivative;
}

} // namespace nabla::host
