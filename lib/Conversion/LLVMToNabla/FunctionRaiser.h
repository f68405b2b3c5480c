//===- FunctionRaiser.h - Rewriting one LLVM function (internal) -*- C++
//-*-===//
//
// The state of rewriting one LLVM function into a func.func over memrefs
// (RaiseFunction.cpp): the mapping of scalars, of pointers to element
// offsets and of roots to memrefs. Enzyme requests (EnzymeRequests.cpp) and
// GPU intrinsics and terminators (RaiseControl.cpp) are its other parts.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_CONVERSION_LLVMTONABLA_FUNCTIONRAISER_H
#define NABLA_LIB_CONVERSION_LLVMTONABLA_FUNCTIONRAISER_H

#include "RaiseLLVM.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/IR/IRMapping.h"

namespace nabla::raise {

// This private header is shared by three source files written against
// MLIR's names.
using llvm::DenseMap;
using llvm::SmallVector;
using llvm::StringRef;
using mlir::Block;
using mlir::DataLayout;
using mlir::FailureOr;
using mlir::IRMapping;
using mlir::Location;
using mlir::LogicalResult;
using mlir::OpBuilder;
using mlir::OperandRange;
using mlir::Operation;
using mlir::Value;
namespace func = mlir::func;
namespace LLVM = mlir::LLVM;

/// One argument of an Enzyme request, as the markers describe it.
struct RequestArgument {
  nabla::Activity activity;
  Value primal;
  Value shadow; // for dup / dupnoneed
};

class FunctionRaiser {
public:
  FunctionRaiser(ModulePlan &module, FunctionPlan &plan, Block &into)
      : module(module), plan(plan), into(into), builder(plan.func.getContext()),
        layout(DataLayout::closest(plan.func)) {}

  func::FuncOp run();

private:
  LogicalResult createSignature();
  LogicalResult raiseOp(Operation *op);
  LogicalResult raisePointerOp(Operation *op);
  LogicalResult raiseMemoryOp(Operation *op);
  LogicalResult raiseAtomic(LLVM::AtomicRMWOp rmw);
  LogicalResult raiseCall(LLVM::CallOp call);
  /// `__enzyme_augmentsize(f, markers...)`: nabla.split_tape_bytes.
  LogicalResult raiseEnzymeAugmentSize(LLVM::CallOp call);
  LogicalResult raiseEnzymeRequest(LLVM::CallOp call, FunctionPlan &callee,
                                   bool reverse);
  LogicalResult raiseNamedOp(Operation *op);
  /// CUDA's full-warp votes and reductions (WarpCollectives.cpp): true if
  /// `op` (named `name`) was one and is raised, false if it is not one.
  FailureOr<bool> raiseWarpCollective(Operation *op, StringRef name);
  /// llvm.memset / llvm.memcpy as element loops (MemoryIntrinsics.cpp):
  /// true if `op` was one and is raised.
  FailureOr<bool> raiseMemoryIntrinsic(Operation *op);
  LogicalResult raiseTerminator(Operation *op);
  FailureOr<SmallVector<Value>> successorOperands(Operation *op, Block *dest,
                                                  OperandRange operands);

  Value lookup(Operation *user, Value value);
  /// The memref and element offset of pointer `value`.
  FailureOr<std::pair<Value, Value>> lookupPointer(Operation *user,
                                                   Value value);
  Value toIndex(Location loc, Value integer);
  Value indexConstant(Location loc, int64_t value);
  Value castToDynamic(Location loc, Value memref);
  Value getHostGlobal(Location loc, unsigned root);
  void zeroSlot(Location loc, Value slot);
  Value linearThreadId(Location loc);
  /// A load of `type` or a store of `value` at element `index` of `memref`,
  /// whose element type may be another (PunnedAccess.cpp).
  Value loadAs(Location loc, Value memref, Value index, mlir::Type type);
  /// The presence flag (i32) a call passes for `pointer`: the flag of the
  /// parameter it is (through casts), or 1.
  Value getPresenceFlag(Location loc, Value pointer);
  void storeAs(Location loc, Value value, Value memref, Value index);

  ModulePlan &module;
  FunctionPlan &plan;
  Block &into;
  OpBuilder builder;
  DataLayout layout;
  func::FuncOp result;
  IRMapping scalars;
  DenseMap<Value, Value> offsets;
  DenseMap<Value, nabla::Activity> markers;
  SmallVector<Value> rootBases;
  /// The presence flag (i32, 0: the launch passed null) of a kernel pointer
  /// parameter's root, for its null tests.
  DenseMap<unsigned, Value> presenceFlags;
  SmallVector<Value> slotValues;
  DenseMap<Block *, Block *> blocks;
  Value zero;
};

} // namespace nabla::raise

#endif // NABLA_LIB_CONVERSION_LLVMTONABLA_FUNCTIONRAISER_H
