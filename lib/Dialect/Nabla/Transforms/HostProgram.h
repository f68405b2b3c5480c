//===- HostProgram.h - Host-level AD internals ------------------*- C++ -*-===//
//
// The generator behind HostDerivative.h: what a host function does to its
// buffers (HostProgram.cpp) and the derivative it becomes (HostSweeps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTPROGRAM_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTPROGRAM_H

#include "HostHelperKernels.h"

#include "nabla/Dialect/Nabla/IR/DerivativeSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <vector>

namespace nabla::host {

using namespace mlir;

/// The buffer a view (or cast) of it is made from, else null.
mlir::Value getViewSource(mlir::Operation *op);

/// The buffer `value` views: a function argument or an allocation.
mlir::Value getRoot(mlir::Value value);

/// gpu.alloc, memref.alloc or memref.alloca.
bool isAllocation(mlir::Operation *op);

struct Access {
  bool reads = false, writes = false;
};

/// What the kernel does to its buffer parameter `param`, through views;
/// anything unknown (a call) reads and writes.
Access getAccess(mlir::Value param);

/// The gpu.func `launch` launches, or null.
mlir::gpu::GPUFuncOp lookupKernel(mlir::gpu::LaunchFuncOp launch);

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
  /// True if a launched kernel's adjoint or tangent could not be generated
  /// (diagnosed).
  bool hasFailed() const { return generationFailed; }
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
  /// A host loop over the flat host buffer `flat`: `flat[i] += addend[i]`,
  /// or zero without an addend.
  void fillOnHost(Location loc, Value flat, Value count, Value addend);
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
  bool generationFailed = false;
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
  /// Host shadows (registered): unregistered and freed at the end.
  SmallVector<Value> hostTemporaries;
  Scope *topScope = nullptr;
};

} // namespace nabla::host

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_HOSTPROGRAM_H
