//===- KernelAdjoint.cpp - Adjoints of whole kernels ----------------------===//
//
// `nabla.kernel_adjoint @k -> @dk` becomes:
//  - `func.func private @__nabla_kernel_k`, the body of @k as a device
//    function whose trailing parameters are @k's attributions;
//  - `gpu.func @dk` with @k's launch shape, parameters expanded by the
//    activities (each dup one followed by its shadow), @k's attributions
//    followed, for those with float elements, by shadow attributions; its body
//    zeroes the shadow attributions (the cotangent of scratch memory's final
//    state is zero), synchronizes the block, and requests `nabla.autodiff` of
//    the body function, which the pass then expands as any request.
//  - `nabla.kernel_tangent` builds the same kernel around a `nabla.fwddiff`
//    (tangent attributions zeroed likewise);
//  - deterministic: one more, trailing `memref<?xi32>` parameter, the scratch
//    of the ordered accumulation, which the request passes on
//    (`nabla.scratch`: the enclosing kernel's last argument).
//
//===----------------------------------------------------------------------===//

#include "KernelAdjoint.h"
#include "SplitDerivative.h"

#include "nabla/Dialect/Nabla/IR/NablaDialect.h"

#include "DerivativeRules.h"
#include "GPUDerivatives.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace nabla;

namespace {

/// The attribute of a body function listing the views of dynamic shared
/// memory made into its trailing parameters: their types and element counts.
constexpr StringLiteral kDynamicViewsAttrName = "nabla.dynamic_shared_views";

/// Makes each typed view of dynamic shared memory in `body` (memref.view of
/// gpu.dynamic_shared_memory from byte 0, a constant count) a trailing
/// parameter, so that the adjoint can pass it with a shadow; records them
/// in kDynamicViewsAttrName. Views of other shapes stay (the AD refuses
/// differentiated stores into them).
void extractDynamicSharedViews(func::FuncOp body) {
  SmallVector<memref::ViewOp> views;
  body.walk([&](gpu::DynamicSharedMemoryOp region) {
    for (Operation *user : region->getUsers()) {
      auto view = dyn_cast<memref::ViewOp>(user);
      if (!view || view->getParentOp() != body.getOperation() ||
          view.getType().getRank() != 1 ||
          !matchPattern(view.getByteShift(), m_Zero()) ||
          (view.getType().isDynamicDim(0) &&
           !matchPattern(view.getSizes().front(), m_Constant())))
        return;
    }
    for (Operation *user : region->getUsers())
      views.push_back(cast<memref::ViewOp>(user));
  });
  if (views.empty())
    return;
  Builder builder(body.getContext());
  SmallVector<Attribute> recorded;
  Block &entry = body.getBody().front();
  for (memref::ViewOp view : views) {
    int64_t count = view.getType().getDimSize(0);
    if (view.getType().isDynamicDim(0))
      count = *getConstantIntValue(view.getSizes().front());
    BlockArgument parameter =
        entry.addArgument(view.getType(), view.getLoc());
    view.getResult().replaceAllUsesWith(parameter);
    recorded.push_back(builder.getArrayAttr(
        {TypeAttr::get(view.getType()), builder.getI64IntegerAttr(count)}));
  }
  for (memref::ViewOp view : views)
    view.erase();
  body.walk([](gpu::DynamicSharedMemoryOp region) {
    if (region->use_empty())
      region.erase();
  });
  body.setFunctionType(FunctionType::get(
      body.getContext(), llvm::to_vector(entry.getArgumentTypes()), {}));
  body->setAttr(kDynamicViewsAttrName, builder.getArrayAttr(recorded));
}

/// The body of `kernel` as a private device function (created once).
func::FuncOp getBodyFunction(gpu::GPUFuncOp kernel, SymbolTable &symbols) {
  std::string name = ("__nabla_kernel_" + kernel.getName()).str();
  if (auto existing = symbols.lookup<func::FuncOp>(name))
    return existing;
  OpBuilder builder(kernel);
  Block &entry = kernel.getBody().front();
  auto type = FunctionType::get(kernel.getContext(),
                                llvm::to_vector(entry.getArgumentTypes()), {});
  auto body = func::FuncOp::create(builder, kernel.getLoc(), name, type);
  body.setPrivate();
  IRMapping mapping;
  kernel.getBody().cloneInto(&body.getBody(), mapping);
  body.walk([](gpu::ReturnOp ret) {
    OpBuilder at(ret);
    func::ReturnOp::create(at, ret.getLoc());
    ret.erase();
  });
  extractDynamicSharedViews(body);
  // Attributions and views of dynamic shared memory, zeroed shadows all.
  for (unsigned i = kernel.getNumArguments(); i < body.getNumArguments(); ++i)
    body.setArgAttr(i, kAttributionArgAttrName, builder.getUnitAttr());
  symbols.insert(body);
  return body;
}

/// Stores zero into every element of the static `memref`, the elements
/// strided over `start` + k * `step`.
void zeroFill(OpBuilder &b, Location loc, Value memref, Value start,
              Value step) {
  auto type = cast<MemRefType>(memref.getType());
  Value count = arith::ConstantIndexOp::create(b, loc, type.getNumElements());
  auto loop = scf::ForOp::create(b, loc, start, count, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value linear = loop.getInductionVar();
  SmallVector<Value> indices(type.getRank());
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    Value extent = arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
    indices[d] = arith::RemUIOp::create(b, loc, linear, extent);
    linear = arith::DivUIOp::create(b, loc, linear, extent);
  }
  memref::StoreOp::create(b, loc, createZero(b, loc, type.getElementType()),
                          memref, indices);
}

bool needsShadow(Type attribution) {
  return isa<FloatType>(cast<MemRefType>(attribution).getElementType());
}

} // namespace

/// Builds, next to `request`, the kernel `name` that runs `mode`'s
/// derivative of `kernel` (whose body function is `body`) with
/// `activities`; `splitHalf` ("augmented", "reverse") builds one half of
/// split mode, with a trailing caller-owned tape.
static LogicalResult buildDerivativeKernel(Operation *request,
                                           gpu::GPUFuncOp kernel,
                                           func::FuncOp body,
                                           SymbolTable &symbols,
                                           StringRef name,
                                           ArrayRef<Activity> activities,
                                           DerivativeMode mode,
                                           bool deterministic,
                                           StringRef splitHalf) {
  MLIRContext *context = request->getContext();
  Location loc = request->getLoc();

  // The derivative kernel's signature and attributions.
  SmallVector<Type> inputs;
  for (auto [type, activity] :
       llvm::zip(kernel.getArgumentTypes(), activities)) {
    inputs.push_back(type);
    if (hasShadow(activity))
      inputs.push_back(type);
  }
  if (deterministic || !splitHalf.empty())
    inputs.push_back(
        MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 32)));
  // Dynamic shared memory the body views: its shadow follows the primal in
  // the launch's region, at the launch's bytes (a parameter the runtimes
  // set, reserving twice the bytes).
  auto dynamicViews = body->getAttrOfType<ArrayAttr>(kDynamicViewsAttrName);
  if (dynamicViews)
    inputs.push_back(IntegerType::get(context, 32));
  auto withShadows = [](ArrayRef<BlockArgument> attributions) {
    SmallVector<Type> types;
    for (BlockArgument attribution : attributions) {
      Type type = attribution.getType();
      types.push_back(type);
      if (needsShadow(type))
        types.push_back(type);
    }
    return types;
  };
  SmallVector<Type> workgroup = withShadows(kernel.getWorkgroupAttributions());
  SmallVector<Type> privates = withShadows(kernel.getPrivateAttributions());
  OpBuilder builder(request);
  auto adjoint = gpu::GPUFuncOp::create(builder, loc, name,
                                        FunctionType::get(context, inputs, {}),
                                        workgroup, privates);
  adjoint->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                   builder.getUnitAttr());
  if (dynamicViews)
    adjoint.setArgAttr(inputs.size() - 1, kDynamicSharedBytesAttrName,
                       builder.getUnitAttr());
  if (!splitHalf.empty())
    adjoint.setArgAttr(inputs.size() - 1 - (dynamicViews ? 1 : 0),
                       kSplitTapeAttrName, builder.getUnitAttr());
  // An optional buffer's presence flag (a frontend's null test) keeps
  // naming it, at its position among the adjoint's parameters.
  SmallVector<unsigned> positions;
  for (auto [index, activity] : llvm::enumerate(activities)) {
    positions.push_back(index + llvm::count_if(
                                    ArrayRef(activities).take_front(index),
                                    hasShadow));
  }
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    if (auto of = kernel.getArgAttrOfType<IntegerAttr>(i, kPresenceAttrName);
        of && of.getInt() >= 0 &&
        static_cast<uint64_t>(of.getInt()) < positions.size())
      adjoint.setArgAttr(positions[i], kPresenceAttrName,
                         builder.getI64IntegerAttr(positions[of.getInt()]));
  if (std::optional<DenseI32ArrayAttr> known = kernel.getKnownBlockSizeAttr())
    adjoint.setKnownBlockSizeAttr(*known);
  if (std::optional<DenseI32ArrayAttr> known = kernel.getKnownGridSizeAttr())
    adjoint.setKnownGridSizeAttr(*known);

  // Body: zero the shadow attributions, then differentiate the kernel body.
  Block &entry = adjoint.getBody().front();
  builder.setInsertionPointToStart(&entry);
  SmallVector<Value> operands;
  SmallVector<Attribute> bodyActivities;
  auto activityAttr = [&](Activity a) { return ActivityAttr::get(context, a); };
  unsigned next = 0;
  for (Activity activity : activities) {
    operands.push_back(entry.getArgument(next++));
    if (hasShadow(activity))
      operands.push_back(entry.getArgument(next++));
    bodyActivities.push_back(activityAttr(activity));
  }
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  // Threads of the block stride over workgroup shadows together.
  Value linear, threads;
  std::tie(linear, threads) = emitLinearIdAndCount(builder, loc);
  bool zeroedWorkgroup = false;
  auto passAttributions = [&](ArrayRef<BlockArgument> attributions,
                              bool isWorkgroup) {
    for (unsigned k = 0; k < attributions.size(); ++k) {
      Value primal = attributions[k];
      operands.push_back(primal);
      if (!needsShadow(primal.getType())) {
        bodyActivities.push_back(activityAttr(Activity::Const));
        continue;
      }
      Value shadow = attributions[++k];
      operands.push_back(shadow);
      bodyActivities.push_back(activityAttr(Activity::Dup));
      if (isWorkgroup)
        zeroFill(builder, loc, shadow, linear, threads);
      else
        zeroFill(builder, loc, shadow, zero, one);
      zeroedWorkgroup |= isWorkgroup;
    }
  };
  passAttributions(adjoint.getWorkgroupAttributions(), /*isWorkgroup=*/true);
  passAttributions(adjoint.getPrivateAttributions(), /*isWorkgroup=*/false);
  if (dynamicViews) {
    Value bytes = arith::IndexCastUIOp::create(
        builder, loc, builder.getIndexType(),
        entry.getArgument(adjoint.getNumArguments() - 1));
    auto rawType = MemRefType::get(
        {ShapedType::kDynamic}, builder.getI8Type(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
    Value raw = gpu::DynamicSharedMemoryOp::create(builder, loc, rawType);
    for (Attribute recorded : dynamicViews) {
      auto pair = cast<ArrayAttr>(recorded);
      auto type = cast<MemRefType>(cast<TypeAttr>(pair[0]).getValue());
      int64_t count = cast<IntegerAttr>(pair[1]).getInt();
      SmallVector<Value> sizes;
      if (type.isDynamicDim(0))
        sizes.push_back(arith::ConstantIndexOp::create(builder, loc, count));
      operands.push_back(
          memref::ViewOp::create(builder, loc, type, raw, zero, sizes));
      if (!needsShadow(type)) {
        bodyActivities.push_back(activityAttr(Activity::Const));
        continue;
      }
      // The shadow: as many elements as the launch's bytes hold, zeroed by
      // the block's threads together.
      int64_t elementBytes =
          std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      Value shadowCount = arith::DivUIOp::create(
          builder, loc, bytes,
          arith::ConstantIndexOp::create(builder, loc, elementBytes));
      auto shadowType = MemRefType::get({ShapedType::kDynamic},
                                        type.getElementType(),
                                        MemRefLayoutAttrInterface(),
                                        type.getMemorySpace());
      Value shadow = memref::ViewOp::create(builder, loc, shadowType, raw,
                                            bytes, ValueRange{shadowCount});
      scf::ForOp::create(
          builder, loc, linear, shadowCount, threads, ValueRange{},
          [&](OpBuilder &b, Location l, Value i, ValueRange) {
            memref::StoreOp::create(
                b, l, createZero(b, l, type.getElementType()), shadow, i);
            scf::YieldOp::create(b, l);
          });
      if (shadowType != type)
        shadow = memref::CastOp::create(builder, loc, type, shadow);
      operands.push_back(shadow);
      bodyActivities.push_back(activityAttr(Activity::Dup));
      zeroedWorkgroup = true;
    }
  }
  if (zeroedWorkgroup)
    gpu::BarrierOp::create(builder, loc);
  auto callee = FlatSymbolRefAttr::get(body.getSymNameAttr());
  if (mode == DerivativeMode::Reverse) {
    auto autodiff = AutodiffOp::create(
        builder, loc, TypeRange{}, callee, operands,
        builder.getArrayAttr(bodyActivities), builder.getArrayAttr({}));
    if (deterministic)
      autodiff->setAttr(kScratchAttrName, builder.getUnitAttr());
    if (!splitHalf.empty())
      autodiff->setAttr(kSplitAttrName, builder.getStringAttr(splitHalf));
  } else {
    FwddiffOp::create(builder, loc, TypeRange{}, callee, operands,
                      builder.getArrayAttr(bodyActivities),
                      builder.getArrayAttr({}));
  }
  gpu::ReturnOp::create(builder, loc);
  symbols.insert(adjoint);
  return success();
}

/// Builds the derivative kernel(s) of `request` (KernelAdjoint.h) and
/// erases it.
static LogicalResult expandKernelDerivative(Operation *request,
                                            StringRef kernelName,
                                            StringRef name, StringRef reverse,
                                            SmallVector<Activity> activities,
                                            DerivativeMode mode,
                                            bool deterministic) {
  Operation *table = SymbolTable::getNearestSymbolTable(request);
  SymbolTable symbols(table);
  auto kernel = symbols.lookup<gpu::GPUFuncOp>(kernelName);
  if (!kernel)
    return request->emitOpError("kernel @")
           << kernelName << " does not resolve";
  for (BlockArgument attribution : llvm::concat<const BlockArgument>(
           kernel.getWorkgroupAttributions(), kernel.getPrivateAttributions()))
    if (!cast<MemRefType>(attribution.getType()).hasStaticShape())
      return request->emitOpError("needs statically shaped attributions");
  func::FuncOp body = getBodyFunction(kernel, symbols);
  if (reverse.empty()) {
    if (failed(buildDerivativeKernel(request, kernel, body, symbols, name,
                                     activities, mode, deterministic, "")))
      return failure();
  } else if (failed(buildDerivativeKernel(request, kernel, body, symbols, name,
                                          activities, mode, false,
                                          "augmented")) ||
             failed(buildDerivativeKernel(request, kernel, body, symbols,
                                          reverse, activities, mode, false,
                                          "reverse"))) {
    return failure();
  }
  request->erase();
  return success();
}

LogicalResult nabla::expandKernelAdjoint(KernelAdjointOp request,
                                         bool deterministic) {
  std::optional<StringRef> reverse = request.getReverse();
  return expandKernelDerivative(
      request, request.getKernel(), request.getAdjoint(),
      reverse ? *reverse : StringRef(), request.getArgumentActivities(),
      DerivativeMode::Reverse,
      !reverse && (deterministic || request.getDeterministic()));
}

LogicalResult nabla::expandKernelTangent(KernelTangentOp request) {
  return expandKernelDerivative(request, request.getKernel(),
                                request.getTangent(), StringRef(),
                                request.getArgumentActivities(),
                                DerivativeMode::Forward,
                                /*deterministic=*/false);
}
