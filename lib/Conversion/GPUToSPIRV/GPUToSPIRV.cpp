//===- GPUToSPIRV.cpp - Target-neutral GPU modules to SPIR-V --------------===//
//
// Nabla's GPU-to-SPIR-V conversion. Upstream `convert-gpu-to-spirv` covers
// gpu/arith/memref but not math, places the spirv.module next to (not inside)
// the gpu.module, needs storage classes already on every memref and has no
// float atomic add. This pass supplies those pieces: a target environment,
// entry-point ABIs from the launch's block size, Nabla's memory-space
// mapping and the full pattern set, with Nabla's own patterns from the files
// beside it (atomics in AtomicsToSPIRV.cpp, bit counts, exact remainders,
// accurate arctangents, dynamic shared memory, isolated constructs).
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "nabla/Conversion/Passes.h"
#include "nabla/Support/OptionNames.h"

#include "mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h"
#include "mlir/Conversion/ControlFlowToSPIRV/ControlFlowToSPIRV.h"
#include "mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "mlir/Conversion/IndexToSPIRV/IndexToSPIRV.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h"
#include "mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h"
#include "mlir/Conversion/UBToSPIRV/UBToSPIRV.h"
#include "mlir/Conversion/VectorToSPIRV/VectorToSPIRV.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nabla {
#define GEN_PASS_DEF_CONVERTGPUTOSPIRV
#include "nabla/Conversion/Passes.h.inc"
} // namespace nabla

using namespace mlir;

//===----------------------------------------------------------------------===//
// Memory spaces
//===----------------------------------------------------------------------===//

std::optional<spirv::StorageClass>
nabla::mapMemorySpaceToStorageClass(Attribute memorySpace) {
  if (!memorySpace)
    return spirv::StorageClass::StorageBuffer;
  if (auto gpuSpace = dyn_cast<gpu::AddressSpaceAttr>(memorySpace)) {
    switch (gpuSpace.getValue()) {
    case gpu::AddressSpace::Global:
      return spirv::StorageClass::StorageBuffer;
    case gpu::AddressSpace::Workgroup:
      return spirv::StorageClass::Workgroup;
    case gpu::AddressSpace::Private:
      return spirv::StorageClass::Function;
    }
  }
  return spirv::mapMemorySpaceToVulkanStorageClass(memorySpace);
}

namespace {

/// Moves the memrefs produced by `memref.alloca` (and views of them) into the
/// private address space, so that they map to the Function storage class
/// instead of the default StorageBuffer.
void markAllocasPrivate(gpu::GPUModuleOp module) {
  auto privateSpace = gpu::AddressSpaceAttr::get(module.getContext(),
                                                 gpu::AddressSpace::Private);
  SmallVector<Value> worklist;
  module.walk(
      [&](memref::AllocaOp alloca) { worklist.push_back(alloca.getResult()); });
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || type.getMemorySpace())
      continue;
    value.setType(MemRefType::get(type.getShape(), type.getElementType(),
                                  type.getLayout(), privateSpace));
    for (Operation *user : value.getUsers())
      if (isa<ViewLikeOpInterface>(user))
        for (Value result : user->getResults())
          worklist.push_back(result);
  }
}

/// Replaces gpu.func memory attributions, which the upstream SPIR-V lowering
/// does not convert, by allocations it does: `memref.alloc` in workgroup
/// memory becomes a Workgroup global variable, `memref.alloca` a Function
/// variable.
void materializeAttributions(gpu::GPUFuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  unsigned first = kernel.getFirstWorkgroupAttributionIndex();
  unsigned workgroupCount = kernel.getNumWorkgroupAttributions();
  unsigned total = workgroupCount + kernel.getNumPrivateAttributions();
  for (unsigned k = 0; k < total; ++k) {
    BlockArgument arg = entry.getArgument(first + k);
    auto type = cast<MemRefType>(arg.getType());
    Value replacement =
        k < workgroupCount
            ? memref::AllocOp::create(builder, arg.getLoc(), type).getResult()
            : memref::AllocaOp::create(builder, arg.getLoc(), type).getResult();
    arg.replaceAllUsesWith(replacement);
  }
  entry.eraseArguments(first, total);
  kernel->setAttr(kernel.getNumWorkgroupAttributionsAttrName(),
                  builder.getI64IntegerAttr(0));
  kernel->removeAttr("workgroup_attrib_attrs");
  kernel->removeAttr("private_attrib_attrs");
}

/// SPIR-V has no lowering for memref.global: each use of a constant global
/// with known contents (a materialized relocation record, a lookup table)
/// becomes a private array filled with the constants where it is used.
LogicalResult materializeConstantGlobals(gpu::GPUModuleOp module) {
  SmallVector<memref::GetGlobalOp> uses;
  module.walk([&](memref::GetGlobalOp get) { uses.push_back(get); });
  for (memref::GetGlobalOp get : uses) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    auto value =
        global
            ? dyn_cast_or_null<DenseElementsAttr>(global.getConstantInitValue())
            : DenseElementsAttr();
    MemRefType type = get.getType();
    if (!global || !global.getConstant() || !value || !type.hasStaticShape() ||
        type.getRank() != 1 || type.getNumElements() > 4096)
      return get.emitOpError("reads a global that the SPIR-V target cannot "
                             "materialize (it needs a constant 1-D global "
                             "of at most 4096 known elements)");
    OpBuilder builder(get);
    Location loc = get.getLoc();
    auto local = memref::AllocaOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()));
    for (auto [i, element] : llvm::enumerate(value.getValues<Attribute>())) {
      Value index = arith::ConstantIndexOp::create(builder, loc, i);
      Value constant =
          arith::ConstantOp::create(builder, loc, cast<TypedAttr>(element));
      memref::StoreOp::create(builder, loc, constant, local, index);
    }
    get.replaceAllUsesWith(local.getResult());
    get.erase();
  }
  for (auto global :
       llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
    if (SymbolTable::symbolKnownUseEmpty(global, module))
      global.erase();
  return success();
}

} // namespace

namespace {
/// math.trunc as floor (x >= 0) or ceil (x < 0): GLSL.std.450 has Trunc but
/// upstream's MathToSPIRV does not lower math.trunc.
struct TruncToFloorOrCeil : public OpRewritePattern<math::TruncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::TruncOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value zero = arith::ConstantOp::create(
        rewriter, loc, cast<TypedAttr>(rewriter.getZeroAttr(x.getType())));
    Value negative = arith::CmpFOp::create(rewriter, loc,
                                           arith::CmpFPredicate::OLT, x, zero);
    Value up = math::CeilOp::create(rewriter, loc, x);
    Value down = math::FloorOp::create(rewriter, loc, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, up, down);
    return success();
  }
};
/// math.copysign(x, y) as select(signbit(y), -|x|, |x|). Upstream's
/// mask-and-or of bit casts is valid SPIR-V, but lavapipe (Mesa 22.3.6)
/// miscomputes it when the result feeds a min and a barrier and an atomic
/// follow: 2^1023 for -1 in f64 (difftest seed 65774), +2 for round(-1.67)
/// = copysign(2, -1.67) in f32 (seed 64742). Exact, -0 and NaN signs included.
struct CopySignBySelect : public OpRewritePattern<math::CopySignOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::CopySignOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto element = dyn_cast<FloatType>(getElementTypeOrSelf(type));
    if (!element)
      return failure();
    Location loc = op.getLoc();
    Type intType = rewriter.getIntegerType(element.getWidth());
    if (auto shaped = dyn_cast<ShapedType>(type))
      intType = shaped.clone(intType);
    Value magnitude = math::AbsFOp::create(rewriter, loc, op.getLhs());
    Value negated = arith::NegFOp::create(rewriter, loc, magnitude);
    Value bits = arith::BitcastOp::create(rewriter, loc, intType, op.getRhs());
    Value zero = arith::ConstantOp::create(
        rewriter, loc, cast<TypedAttr>(rewriter.getZeroAttr(intType)));
    Value signBit = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, bits, zero);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, signBit, negated,
                                                 magnitude);
    return success();
  }
};
/// math.round(x) (half away from zero) as copysign(floor(|x|) + (frac >= 0.5),
/// x), the copysign then a select (CopySignBySelect): upstream's lowering
/// ends in the same mask-and-or that lavapipe miscomputes (seed 64742).
struct RoundByCopySign : public OpRewritePattern<math::RoundOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RoundOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isa<FloatType>(getElementTypeOrSelf(type)))
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](double value) -> Value {
      TypedAttr attr = rewriter.getFloatAttr(getElementTypeOrSelf(type), value);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = DenseElementsAttr::get(shaped, attr);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    Value magnitude = math::AbsFOp::create(rewriter, loc, op.getOperand());
    Value whole = math::FloorOp::create(rewriter, loc, magnitude);
    Value fraction = arith::SubFOp::create(rewriter, loc, magnitude, whole);
    Value half = constant(0.5);
    Value up = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGE,
                                     fraction, half);
    Value step =
        arith::SelectOp::create(rewriter, loc, up, constant(1), constant(0));
    Value rounded = arith::AddFOp::create(rewriter, loc, whole, step);
    rewriter.replaceOpWithNewOp<math::CopySignOp>(op, rounded, op.getOperand());
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {

/// The Vulkan 1.1 environment Nabla targets: what lavapipe and current
/// discrete GPUs provide. spirv-update-vce later trims the module's
/// declaration to what it uses. Metal drops Float64.
spirv::TargetEnvAttr getDefaultTargetEnv(MLIRContext *context, bool forMetal,
                                         unsigned subgroupSize) {
  using C = spirv::Capability;
  SmallVector<C> capabilities = {
      C::Shader,
      C::Int8,
      C::Int16,
      C::Int64,
      C::Float16,
      C::StorageBuffer16BitAccess,
      C::StorageBuffer8BitAccess,
      C::GroupNonUniform,
      C::GroupNonUniformVote,
      C::GroupNonUniformBallot,
      C::GroupNonUniformShuffle,
      C::GroupNonUniformShuffleRelative,
      C::GroupNonUniformArithmetic,
      C::AtomicFloat32AddEXT,
  };
  // f64 atomic adds are emulated with 64-bit compare-exchange loops by
  // default: AtomicFloat64AddEXT is optional in Vulkan (many GPUs lack it),
  // and lavapipe's LLVM 15 x86 back end aborts on its native form on some
  // CPUs ("Cannot select: store ... trunc to f64"). A target environment
  // that allows it (spirv.target_env on the module) keeps it native.
  if (!forMetal) {
    capabilities.push_back(C::Float64);
    capabilities.push_back(C::Int64Atomics);
  }
  SmallVector<spirv::Extension> extensions = {
      spirv::Extension::SPV_KHR_storage_buffer_storage_class,
      spirv::Extension::SPV_KHR_16bit_storage,
      // char/bool scalar parameters are one-element i8 storage buffers.
      spirv::Extension::SPV_KHR_8bit_storage,
      spirv::Extension::SPV_EXT_shader_atomic_float_add};
  auto triple = spirv::VerCapExtAttr::get(spirv::Version::V_1_3, capabilities,
                                          extensions, context);
  spirv::ResourceLimitsAttr defaults = spirv::getDefaultResourceLimits(context);
  auto limits = spirv::ResourceLimitsAttr::get(
      context, defaults.getMaxComputeSharedMemorySize(),
      defaults.getMaxComputeWorkgroupInvocations(),
      defaults.getMaxComputeWorkgroupSize(), subgroupSize, std::nullopt,
      std::nullopt, defaults.getCooperativeMatrixPropertiesKhr(),
      defaults.getCooperativeMatrixPropertiesNv());
  return spirv::TargetEnvAttr::get(triple, limits, spirv::ClientAPI::Vulkan);
}

/// memref.atomic_rmw converts to atomics with acquire-release semantics but
/// no storage class, which order no other memory: on storage buffers they
/// also cover uniform memory, so an atomic can publish a thread's earlier
/// stores to another workgroup (the ordered accumulation of deterministic
/// adjoints relies on that).
static void orderStorageBufferAtomics(spirv::ModuleOp module) {
  using spirv::MemorySemantics;
  MemorySemantics ordering =
      MemorySemantics::Acquire | MemorySemantics::Release |
      MemorySemantics::AcquireRelease | MemorySemantics::SequentiallyConsistent;
  module.walk([&](Operation *op) {
    if (!op->getName().getStringRef().starts_with("spirv.Atomic") ||
        op->getNumOperands() == 0)
      return;
    auto pointer = dyn_cast<spirv::PointerType>(op->getOperand(0).getType());
    if (!pointer ||
        pointer.getStorageClass() != spirv::StorageClass::StorageBuffer)
      return;
    for (StringRef name :
         {"semantics", "equal_semantics", "unequal_semantics"}) {
      auto attr = op->getAttrOfType<spirv::MemorySemanticsAttr>(name);
      if (!attr || !spirv::bitEnumContainsAny(attr.getValue(), ordering))
        continue;
      op->setAttr(name, spirv::MemorySemanticsAttr::get(
                            op->getContext(),
                            attr.getValue() | MemorySemantics::UniformMemory));
    }
  });
}

struct ConvertGPUToSPIRV
    : public nabla::SuggestOptionNames<
          nabla::impl::ConvertGPUToSPIRVBase<ConvertGPUToSPIRV>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    if (client != "vulkan" && client != "metal") {
      getOperation().emitError("unknown SPIR-V client '")
          << client << "' (expected vulkan or metal)";
      return signalPassFailure();
    }
    if (workgroupSize.size() > 3) {
      getOperation().emitError("workgroup-size takes at most 3 dimensions");
      return signalPassFailure();
    }
    SmallVector<gpu::GPUModuleOp> modules(
        getOperation().getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp module : modules)
      if (failed(convertModule(module)))
        return signalPassFailure();
  }

  /// Returns the workgroup size of `kernel` (empty when it is specialized at
  /// launch), or failure with a diagnostic.
  FailureOr<SmallVector<int32_t, 3>> getWorkgroupSize(gpu::GPUFuncOp kernel) {
    SmallVector<int32_t, 3> size = {1, 1, 1};
    if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize()) {
      for (auto [i, extent] : llvm::enumerate(*known))
        size[i] = extent;
      return size;
    }
    // No size known: the size is specialized at launch
    // (specializeWorkgroupSize).
    if (workgroupSize.empty())
      return SmallVector<int32_t, 3>();
    for (auto [i, extent] : llvm::enumerate(workgroupSize)) {
      if (extent <= 0) {
        kernel.emitOpError("workgroup-size must be positive");
        return failure();
      }
      size[i] = extent;
    }
    return size;
  }

  /// Rewrites math ops GLSL.std.450 lacks into ones it has: exact
  /// expansions for exp2, fpowi (a loop, PowerBySquaring.cpp) and trunc
  /// (found by difftest), comparisons of sign-extended values narrowed
  /// (NarrowComparisons.cpp), remsi exact for INT_MIN (SignedRemainder.cpp),
  /// i1 to index casts as selects (BooleanIndexCasts.cpp),
  /// f32 atan and atan2 within ~3 ulp (AccurateArctangent.cpp), polynomial
  /// approximations (as on the CPU back ends) for erf, erfc, cbrt, asin and
  /// acos.
  /// erfc has its own approximation: 1 - erf(x) loses every digit in the tail
  /// (x > ~3).
  LogicalResult expandUnsupportedMath(gpu::GPUModuleOp module) {
    RewritePatternSet patterns(&getContext());
    math::populateExpansionPatterns(patterns, {"exp2", "fpowi"});
    nabla::populateExpandFPowIPatterns(patterns);
    nabla::populateNarrowComparisonPatterns(patterns);
    nabla::populateExactSignedRemainderPatterns(patterns);
    nabla::populateBooleanIndexCastPatterns(patterns);
    nabla::populateAccurateArctangentPatterns(patterns);
    patterns.add<TruncToFloorOrCeil, CopySignBySelect, RoundByCopySign>(
        &getContext());
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateErfcPattern(patterns);
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name.ends_with("cbrt") || name.ends_with("asin") ||
             name.ends_with("acos");
    });
    return applyPatternsGreedily(module, std::move(patterns));
  }

  LogicalResult convertModule(gpu::GPUModuleOp module) {
    MLIRContext *context = &getContext();
    if (failed(expandUnsupportedMath(module)))
      return module.emitError("math expansion did not converge");
    if (!module->hasAttr(spirv::getTargetEnvAttrName()))
      module->setAttr(
          spirv::getTargetEnvAttrName(),
          getDefaultTargetEnv(context, client == "metal", subgroupSize));
    // Shuffle widths must be the constant subgroup size in SPIR-V.
    unsigned limitSize = spirv::lookupTargetEnvOrDefault(module)
                             .getResourceLimits()
                             .getSubgroupSize();
    module.walk([&](gpu::SubgroupSizeOp op) {
      OpBuilder builder(op);
      op.replaceAllUsesWith(
          arith::ConstantIndexOp::create(builder, op.getLoc(), limitSize)
              .getResult());
      op.erase();
    });
    // Upstream lowers a `uniform` subgroup reduction to the Kernel-only
    // OpGroup* instructions; Vulkan needs OpGroupNonUniform*, and `uniform`
    // is only a promise that every lane takes part.
    module.walk([](gpu::SubgroupReduceOp op) { op.setUniform(false); });
    {
      RewritePatternSet folds(context);
      arith::IndexCastOp::getCanonicalizationPatterns(folds, context);
      (void)applyPatternsGreedily(module, std::move(folds));
    }
    for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      FailureOr<SmallVector<int32_t, 3>> size = getWorkgroupSize(kernel);
      if (failed(size))
        return failure();
      // Sized for the block when known, for the largest block otherwise.
      if (failed(nabla::emulateWideShuffles(kernel, limitSize, *size)))
        return failure();
      kernel->setAttr(spirv::getEntryPointABIAttrName(),
                      spirv::getEntryPointABIAttr(context, *size));
    }

    // Storage classes on every memref type.
    if (failed(materializeConstantGlobals(module)) ||
        failed(nabla::materializeDynamicSharedMemory(
            module, dynamicSharedMemory,
            "--dynamic-shared-memory=BYTES (nabla-run, nabla-compile; the "
            "pipelines' dynamic-shared-memory option)")))
      return failure();
    for (auto kernel : module.getOps<gpu::GPUFuncOp>())
      materializeAttributions(kernel);
    if (failed(nabla::emulateFloatAtomicAdd(module, emulateFloatAtomics,
                                            /*metal=*/client == "metal")) ||
        failed(nabla::emulateNarrowAtomics(module)))
      return failure();
    markAllocasPrivate(module);
    spirv::MemorySpaceToStorageClassConverter memorySpaces(
        nabla::mapMemorySpaceToStorageClass);
    spirv::convertMemRefTypesAndAttrs(module, memorySpaces);

    nabla::selectInitsOfZeroTripLoops(module);

    // Convert a clone into a spirv.module, then move it into the original.
    OpBuilder builder(module);
    auto clone = cast<gpu::GPUModuleOp>(builder.clone(*module));
    spirv::TargetEnvAttr targetEnv = spirv::lookupTargetEnvOrDefault(clone);
    std::unique_ptr<ConversionTarget> target =
        SPIRVConversionTarget::get(targetEnv);
    SPIRVConversionOptions options;
    options.use64bitIndex = use64bitIndex;
    SPIRVTypeConverter typeConverter(targetEnv, options);

    RewritePatternSet patterns(context);
    ScfToSPIRVContext scfContext;
    populateGPUToSPIRVPatterns(typeConverter, patterns);
    arith::populateArithToSPIRVPatterns(typeConverter, patterns);
    populateMathToSPIRVPatterns(typeConverter, patterns);
    populateMemRefToSPIRVPatterns(typeConverter, patterns);
    populateFuncToSPIRVPatterns(typeConverter, patterns);
    populateSCFToSPIRVPatterns(typeConverter, scfContext, patterns);
    cf::populateControlFlowToSPIRVPatterns(typeConverter, patterns);
    index::populateIndexToSPIRVPatterns(typeConverter, patterns);
    populateVectorToSPIRVPatterns(typeConverter, patterns);
    ub::populateUBToSPIRVConversionPatterns(typeConverter, patterns);
    nabla::populateAtomicRMWFloatToSPIRVPatterns(typeConverter, patterns);
    nabla::populateBitCountToSPIRVPatterns(typeConverter, patterns);
    nabla::populateSubgroupBarrierToSPIRVPatterns(typeConverter, patterns,
                                                  subgroupSize);

    if (failed(applyFullConversion(clone.getOperation(), *target,
                                   std::move(patterns)))) {
      // The clone may be half converted; drop whatever is left of it.
      for (Operation *op = module->getPrevNode(); op && op != clone;) {
        Operation *prev = op->getPrevNode();
        op->erase();
        op = prev;
      }
      if (Operation *leftover = module->getPrevNode())
        leftover->erase();
      return failure();
    }

    // The conversion replaced the clone by a spirv.module right before the
    // original gpu.module: move it in and drop the original body.
    auto spirvModule = dyn_cast_or_null<spirv::ModuleOp>(module->getPrevNode());
    if (!spirvModule)
      return module.emitError("GPU-to-SPIR-V conversion produced no module");
    Block &body = module.getBodyRegion().front();
    for (Operation &op : llvm::make_early_inc_range(body))
      op.erase();
    spirvModule->moveBefore(&body, body.end());
    orderStorageBufferAtomics(spirvModule);
    nabla::specializeWorkgroupSize(spirvModule);
    nabla::isolateStructuredConstructs(spirvModule);
    return success();
  }
};

} // namespace
