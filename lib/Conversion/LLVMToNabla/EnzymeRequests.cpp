//===- EnzymeRequests.cpp - Enzyme calls to nabla.autodiff/fwddiff ----===//
//
// A call of __enzyme_autodiff*/__enzyme_fwddiff* with Enzyme's activity
// markers becomes nabla.autodiff / nabla.fwddiff (Enzyme's defaults and
// semantics, docs/Frontends.md); workgroup globals of the differentiated
// function get zeroed shadow attributions.
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nabla::raise;

Value FunctionRaiser::linearThreadId(Location loc) {
  return buildLinearThreadId(builder, loc);
}

/// Zeroes a workgroup shadow: the block's threads stride over it, then wait.
void FunctionRaiser::zeroSlot(Location loc, Value slot) {
  auto type = cast<MemRefType>(slot.getType());
  Value linear = linearThreadId(loc);
  Value dx = gpu::BlockDimOp::create(builder, loc, gpu::Dimension::x);
  Value dy = gpu::BlockDimOp::create(builder, loc, gpu::Dimension::y);
  Value dz = gpu::BlockDimOp::create(builder, loc, gpu::Dimension::z);
  Value threads = arith::MulIOp::create(
      builder, loc, dx, arith::MulIOp::create(builder, loc, dy, dz));
  // Dynamic shared memory's shadow: as many elements as the launch gave.
  Value size = type.isDynamicDim(0)
                   ? memref::DimOp::create(builder, loc, slot, 0).getResult()
                   : indexConstant(loc, type.getDimSize(0));
  Value zeroValue = arith::ConstantOp::create(
      builder, loc, builder.getZeroAttr(type.getElementType()));
  scf::ForOp::create(builder, loc, linear, size, threads, ValueRange{},
                     [&](OpBuilder &b, Location l, Value i, ValueRange) {
                       memref::StoreOp::create(b, l, zeroValue, slot,
                                               ValueRange{i});
                       scf::YieldOp::create(b, l);
                     });
  gpu::BarrierOp::create(builder, loc);
}

LogicalResult FunctionRaiser::raiseEnzymeRequest(LLVM::CallOp call,
                                                 FunctionPlan &callee,
                                                 bool reverse) {
  Location loc = plainLoc(call.getLoc());
  MLIRContext *context = call.getContext();
  LLVM::LLVMFuncOp calleeFunc = callee.func;
  // Markers tag the next argument; the defaults are Enzyme's: pointers dup,
  // floats active (reverse) or dup (forward), the rest const.
  SmallVector<RequestArgument> arguments;
  std::optional<nabla::Activity> pending;
  // Split mode: the caller's tape comes first (enzyme_allocated, SIZE,
  // enzyme_tape, POINTER).
  EnzymeSplitPrefix prefix = getEnzymeSplitPrefix(call);
  std::optional<StringRef> half = getEnzymeSplitHalf(*call.getCallee());
  auto operands = call.getArgOperands().drop_front(1 + prefix.size);
  for (unsigned i = 0; i < operands.size(); ++i) {
    auto marker = markers.find(operands[i]);
    if (marker != markers.end()) {
      if (pending)
        return fail(call) << "two Enzyme activity markers in a row";
      pending = marker->second;
      continue;
    }
    unsigned param = arguments.size();
    if (param >= calleeFunc.getNumArguments())
      return fail(call) << "this Enzyme request passes more arguments than @"
                        << calleeFunc.getName() << " takes";
    Type type = calleeFunc.getArgumentTypes()[param];
    bool pointer = isa<LLVM::LLVMPointerType>(type);
    nabla::Activity activity =
        pending   ? *pending
        : pointer ? nabla::Activity::Dup
        : isa<FloatType>(type)
            ? (reverse ? nabla::Activity::Active : nabla::Activity::Dup)
            : nabla::Activity::Const;
    pending.reset();
    if (activity == nabla::Activity::Active &&
        (!reverse || pointer || !isa<FloatType>(type)))
      return fail(call) << "enzyme_out applies to floating-point arguments "
                           "of __enzyme_autodiff only (argument #"
                        << param << " of @" << calleeFunc.getName() << ")";
    bool dup = activity == nabla::Activity::Dup ||
               activity == nabla::Activity::DupNoNeed;
    if (dup && !pointer && !(isa<FloatType>(type) && !reverse))
      return fail(call) << "enzyme_dup applies to pointers (and to floats "
                           "in forward mode), not to argument #"
                        << param << " of @" << calleeFunc.getName();
    RequestArgument argument{activity, operands[i], nullptr};
    if (dup) {
      if (i + 1 >= operands.size())
        return fail(call) << "this Enzyme request lacks the shadow of "
                             "argument #"
                          << param << " of @" << calleeFunc.getName();
      argument.shadow = operands[++i];
    }
    arguments.push_back(argument);
  }
  if (arguments.size() != calleeFunc.getNumArguments())
    return fail(call) << "this Enzyme request passes " << arguments.size()
                      << " arguments, @" << calleeFunc.getName() << " takes "
                      << calleeFunc.getNumArguments();

  // A kernel's __shared__ arrays are its launch's own (attributions), not
  // something a caller could pass.
  if (callee.isKernel && !callee.shared.empty())
    return fail(call) << "cannot differentiate the __global__ function @"
                      << calleeFunc.getName()
                      << " inside another kernel: its __shared__ memory "
                         "belongs to its own launch; move its body into a "
                         "__device__ function that both kernels call";

  SmallVector<Value> inputs;
  SmallVector<Attribute> activities;
  auto addInput = [&](Value value, nabla::Activity activity) {
    inputs.push_back(value);
    activities.push_back(nabla::ActivityAttr::get(context, activity));
  };
  unsigned activeCount = 0;
  for (const Param &param : callee.params) {
    const RequestArgument &argument = arguments[param.llvmArgument];
    if (param.kind == Param::Presence) {
      // Whether the primal is null (its shadow is then too, as Enzyme
      // expects).
      addInput(getPresenceFlag(loc, argument.primal), nabla::Activity::Const);
      continue;
    }
    if (param.kind == Param::Scalar) {
      Value value = lookup(call, argument.primal);
      if (!value)
        return failure();
      addInput(value, argument.activity);
      if (argument.activity == nabla::Activity::Active)
        ++activeCount;
      if (argument.shadow) {
        Value shadow = lookup(call, argument.shadow);
        if (!shadow)
          return failure();
        inputs.push_back(shadow);
      }
      continue;
    }
    FailureOr<std::pair<Value, Value>> primal =
        lookupPointer(call, argument.primal);
    if (failed(primal))
      return failure();
    if (param.kind == Param::Offset) {
      addInput(primal->second, nabla::Activity::Const);
      continue;
    }
    addInput(castToDynamic(loc, primal->first),
             argument.shadow ? argument.activity : nabla::Activity::Const);
    if (!argument.shadow)
      continue;
    FailureOr<std::pair<Value, Value>> shadow =
        lookupPointer(call, argument.shadow);
    if (failed(shadow))
      return failure();
    if (shadow->second != primal->second &&
        !(matchPattern(shadow->second, m_Zero()) &&
          matchPattern(primal->second, m_Zero())))
      return fail(call)
             << "the shadow of argument #" << param.llvmArgument
             << " must point at the same offset into its buffer as the "
                "primal does";
    inputs.push_back(castToDynamic(loc, shadow->first));
  }
  for (const SharedSlot &slot : callee.shared) {
    Value value =
        slotValues[llvm::find(plan.shared, slot) - plan.shared.begin()];
    const SharedSlot shadowSlot{slot.global, true};
    auto shadowIt = llvm::find(plan.shared, shadowSlot);
    if (slot.shadow || shadowIt == plan.shared.end()) {
      addInput(value, nabla::Activity::Const);
      continue;
    }
    Value shadow = slotValues[shadowIt - plan.shared.begin()];
    zeroSlot(loc, shadow);
    addInput(value, nabla::Activity::Dup);
    inputs.push_back(shadow);
  }

  // The callee's result: Enzyme seeds a float result with 1 (reverse) or
  // returns its tangent (forward); other results are constant.
  SmallVector<Attribute> resultActivities;
  SmallVector<Type> resultTypes;
  Type calleeResult = calleeFunc.getFunctionType().getReturnType();
  bool floatResult = isa<FloatType>(calleeResult);
  bool hasResult = !isa<LLVM::LLVMVoidType>(calleeResult);
  unsigned skippedResults = 0;
  if (hasResult) {
    if (reverse && floatResult) {
      resultActivities.push_back(
          nabla::ActivityAttr::get(context, nabla::Activity::ActiveNoNeed));
      inputs.push_back(arith::ConstantOp::create(
          builder, loc, builder.getFloatAttr(calleeResult, 1.0)));
    } else if (!reverse && floatResult) {
      resultActivities.push_back(
          nabla::ActivityAttr::get(context, nabla::Activity::DupNoNeed));
      resultTypes.push_back(calleeResult);
    } else {
      resultActivities.push_back(
          nabla::ActivityAttr::get(context, nabla::Activity::Const));
      resultTypes.push_back(calleeResult);
      skippedResults = 1;
    }
  }
  if (reverse)
    for (const Param &param : callee.params)
      if (param.kind == Param::Scalar &&
          arguments[param.llvmArgument].activity == nabla::Activity::Active)
        resultTypes.push_back(param.type);

  auto callee_ = FlatSymbolRefAttr::get(calleeFunc.getSymNameAttr());
  Operation *request;
  if (half) {
    if (hasResult)
      return fail(call) << "split mode differentiates functions returning "
                           "void; @"
                        << calleeFunc.getName() << " returns a value";
    FailureOr<std::pair<Value, Value>> tape =
        lookupPointer(call, prefix.tape);
    if (failed(tape))
      return failure();
    Value buffer = castToDynamic(loc, tape->first);
    auto type = cast<MemRefType>(buffer.getType());
    Type element = type.getElementType();
    if (!(element.isInteger(8) || element.isInteger(32) || element.isF32()))
      return fail(call) << "the tape of a split-mode request must point at "
                           "bytes, 32-bit integers or floats, not "
                        << element;
    if (type.getMemorySpace())
      buffer = memref::MemorySpaceCastOp::create(
          builder, loc,
          MemRefType::get(type.getShape(), element, type.getLayout()), buffer);
    nabla::SplitAutodiffOp::create(builder, loc, TypeRange{},
                                   builder.getStringAttr(*half), callee_,
                                   inputs, buffer, tape->second,
                                   builder.getArrayAttr(activities),
                                   builder.getArrayAttr(resultActivities));
    return success();
  }
  if (reverse)
    request =
        nabla::AutodiffOp::create(builder, loc, resultTypes, callee_, inputs,
                                  builder.getArrayAttr(activities),
                                  builder.getArrayAttr(resultActivities));
  else
    request = nabla::FwddiffOp::create(builder, loc, resultTypes, callee_,
                                       inputs, builder.getArrayAttr(activities),
                                       builder.getArrayAttr(resultActivities));
  ValueRange results = request->getResults().drop_front(
      reverse ? skippedResults : skippedResults);
  if (call.getNumResults() == 0)
    return success();
  Value callResult = call.getResult();
  if (!reverse || activeCount == 0) {
    if (results.size() != 1 || results[0].getType() != callResult.getType())
      return fail(call) << "this Enzyme request returns "
                        << callResult.getType() << ", but differentiating @"
                        << calleeFunc.getName() << " gives " << results.size()
                        << " value(s)";
    scalars.map(callResult, results[0]);
    return success();
  }
  if (results.size() == 1 && results[0].getType() == callResult.getType()) {
    scalars.map(callResult, results[0]);
    return success();
  }
  // Several gradients: Enzyme returns them as a struct; its uses must be
  // extractvalue ops, which are mapped here.
  for (Operation *user : callResult.getUsers()) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!extract || extract.getPosition().size() != 1 ||
        extract.getPosition()[0] >= static_cast<int64_t>(results.size()))
      return fail(call) << "the gradients this Enzyme request returns must "
                           "be read with extractvalue";
    scalars.map(extract.getResult(), results[extract.getPosition()[0]]);
  }
  return success();
}

LogicalResult FunctionRaiser::raiseEnzymeAugmentSize(LLVM::CallOp call) {
  Location loc = plainLoc(call.getLoc());
  MLIRContext *context = call.getContext();
  if (call.getArgOperands().empty())
    return fail(call) << "__enzyme_augmentsize needs the function first";
  auto fnRoot = plan.rootOf.find(call.getArgOperands()[0]);
  FunctionPlan *callee =
      fnRoot == plan.rootOf.end()
          ? nullptr
          : module.lookup(plan.roots[fnRoot->second].global);
  if (!callee)
    return fail(call) << "the first argument of __enzyme_augmentsize must be "
                         "a function of this module";
  LLVM::LLVMFuncOp calleeFunc = callee->func;
  // The activities the markers give (no values follow them): the defaults
  // are those of a reverse-mode request.
  SmallVector<nabla::Activity> perArgument;
  std::optional<nabla::Activity> pending;
  for (Value operand : call.getArgOperands().drop_front()) {
    auto marker = markers.find(operand);
    if (marker == markers.end())
      return fail(call) << "__enzyme_augmentsize takes the function and "
                           "Enzyme activity markers only";
    pending = marker->second;
    perArgument.push_back(*pending);
  }
  for (unsigned i = perArgument.size(); i < calleeFunc.getNumArguments();
       ++i) {
    Type type = calleeFunc.getArgumentTypes()[i];
    perArgument.push_back(isa<LLVM::LLVMPointerType>(type) ? nabla::Activity::Dup
                          : isa<FloatType>(type)            ? nabla::Activity::Active
                                                 : nabla::Activity::Const);
  }
  if (perArgument.size() != calleeFunc.getNumArguments())
    return fail(call) << "__enzyme_augmentsize names " << perArgument.size()
                      << " activities, @" << calleeFunc.getName() << " takes "
                      << calleeFunc.getNumArguments();
  SmallVector<Attribute> activities;
  auto add = [&](nabla::Activity a) {
    activities.push_back(nabla::ActivityAttr::get(context, a));
  };
  for (const Param &param : callee->params) {
    nabla::Activity activity = perArgument[param.llvmArgument];
    bool dup = activity == nabla::Activity::Dup ||
               activity == nabla::Activity::DupNoNeed;
    if (param.kind == Param::Presence || param.kind == Param::Offset)
      add(nabla::Activity::Const);
    else if (param.kind == Param::Scalar)
      add(activity);
    else
      add(dup ? activity : nabla::Activity::Const);
  }
  for (const SharedSlot &slot : callee->shared) {
    const SharedSlot shadowSlot{slot.global, true};
    bool shadowed = !slot.shadow &&
                    llvm::find(plan.shared, shadowSlot) != plan.shared.end();
    add(shadowed ? nabla::Activity::Dup : nabla::Activity::Const);
  }
  Value bytes = nabla::SplitTapeBytesOp::create(
      builder, loc, builder.getIndexType(),
      FlatSymbolRefAttr::get(calleeFunc.getSymNameAttr()),
      builder.getArrayAttr(activities), builder.getArrayAttr({}));
  if (call.getNumResults()) {
    Type type = call.getResult().getType();
    if (!type.isInteger())
      return fail(call) << "__enzyme_augmentsize returns an integer";
    scalars.map(call.getResult(),
                arith::IndexCastOp::create(builder, loc, type, bytes));
  }
  return success();
}
