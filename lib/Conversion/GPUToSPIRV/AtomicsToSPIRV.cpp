//===- AtomicsToSPIRV.cpp - memref atomics to SPIR-V atomics --------------===//
//
// Float atomics SPIR-V for Vulkan cannot do natively become compare-exchange
// loops on integer views of their buffers (emulateFloatAtomicAdd, before the
// conversion), and atomics on 8- and 16-bit elements loops on the 32-bit
// words holding them (emulateNarrowAtomics); float adds lower to spirv.EXT.AtomicFAdd where the target
// environment allows it, integer kinds (and exchanges) to their SPIR-V
// atomics, memref.generic_atomic_rmw to a compare-exchange loop. Split out of
// GPUToSPIRV.cpp, which assembles the conversion.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "nabla/Transforms/GenericAtomics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

//===----------------------------------------------------------------------===//
// Float atomic add
//===----------------------------------------------------------------------===//

/// True if `buffer` is a kernel parameter, a workgroup attribution or an
/// allocation: a buffer whose type can change with its users.
static bool isRootBuffer(Value buffer) {
  return isa<BlockArgument>(buffer) ||
         buffer.getDefiningOp<memref::AllocOp>() ||
         buffer.getDefiningOp<memref::AllocaOp>();
}

/// Gives `buffer` the type `type`, and its kernel the signature that says so
/// when it is a kernel parameter.
static void retypeBuffer(Value buffer, MemRefType type) {
  buffer.setType(type);
  if (auto arg = dyn_cast<BlockArgument>(buffer))
    if (auto kernel = dyn_cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp());
        kernel && arg.getArgNumber() < kernel.getNumArguments()) {
      SmallVector<Type> inputs(kernel.getArgumentTypes());
      inputs[arg.getArgNumber()] = type;
      kernel.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
          type.getContext(), inputs, kernel.getResultTypes())));
    }
}

/// Float atomics SPIR-V for Vulkan cannot do natively (adds without
/// SPV_EXT_shader_atomic_float_add, and every min/max) become
/// OpAtomicCompareExchange loops, which need an integer pointer; logical
/// addressing cannot reinterpret a float buffer, so each buffer such an
/// atomic targets (a kernel parameter, attribution or allocation) is retyped
/// to integers of the same width, its loads and stores bitcast, and each of
/// its float atomics becomes a memref.generic_atomic_rmw whose body combines
/// in floats.
LogicalResult nabla::emulateFloatAtomicAdd(gpu::GPUModuleOp module, bool always,
                                           bool metal) {
  spirv::TargetEnv env(spirv::lookupTargetEnvOrDefault(module));
  auto isNative = [&](memref::AtomicRMWOp op) {
    Type type = op.getType();
    // MSL 3.0 has atomic_float on device memory only.
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        op.getMemRefType().getMemorySpace());
    bool threadgroup =
        space && space.getValue() == gpu::AddressSpace::Workgroup;
    return op.getKind() == arith::AtomicRMWKind::addf && !always &&
           (type.isF32() || type.isF64()) &&
           !(metal && threadgroup) &&
           env.allows(spirv::Extension::SPV_EXT_shader_atomic_float_add) &&
           env.allows(type.isF64() ? spirv::Capability::AtomicFloat64AddEXT
                                   : spirv::Capability::AtomicFloat32AddEXT);
  };
  SmallVector<memref::AtomicRMWOp> atomics;
  module.walk([&](memref::AtomicRMWOp op) {
    if (isa<FloatType>(op.getType()) && !isNative(op))
      atomics.push_back(op);
  });
  llvm::SetVector<Value> buffers;
  for (memref::AtomicRMWOp atomic : atomics) {
    Value buffer = atomic.getMemref();
    if (!isRootBuffer(buffer))
      return atomic.emitOpError(
          "needs a float atomic emulation (min/max, or an add without "
          "SPV_EXT_shader_atomic_float_add), which works on kernel "
          "parameters and allocations, not on views of them");
    if (!atomic.getType().isF16() && !atomic.getType().isF32() &&
        !atomic.getType().isF64())
      return atomic.emitOpError("float atomics are supported on f16, f32 "
                                "and f64 only by the SPIR-V target");
    buffers.insert(buffer);
  }
  for (Value buffer : buffers) {
    auto type = cast<MemRefType>(buffer.getType());
    auto floatType = cast<FloatType>(type.getElementType());
    auto intType = IntegerType::get(module.getContext(), floatType.getWidth());
    retypeBuffer(buffer, MemRefType::get(type.getShape(), intType,
                                         type.getLayout(),
                                         type.getMemorySpace()));
    for (Operation *user : llvm::make_early_inc_range(buffer.getUsers())) {
      OpBuilder b(user);
      Location loc = user->getLoc();
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        Value bits = memref::LoadOp::create(b, loc, buffer, load.getIndices());
        load.replaceAllUsesWith(
            arith::BitcastOp::create(b, loc, floatType, bits).getResult());
        load.erase();
      } else if (auto store = dyn_cast<memref::StoreOp>(user)) {
        Value bits =
            arith::BitcastOp::create(b, loc, intType, store.getValue());
        memref::StoreOp::create(b, loc, bits, buffer, store.getIndices());
        store.erase();
      } else if (auto atomic = dyn_cast<memref::AtomicRMWOp>(user);
                 atomic && isa<FloatType>(atomic.getType())) {
        auto generic = memref::GenericAtomicRMWOp::create(b, loc, buffer,
                                                          atomic.getIndices());
        OpBuilder body = OpBuilder::atBlockEnd(generic.getBody());
        Value current = arith::BitcastOp::create(body, loc, floatType,
                                                 generic.getCurrentValue());
        // An exchange (the reverse sweep taking a stored element's adjoint)
        // stores the value as is.
        Value combined =
            atomic.getKind() == arith::AtomicRMWKind::assign
                ? atomic.getValue()
                : arith::getReductionOp(atomic.getKind(), body, loc, current,
                                        atomic.getValue());
        memref::AtomicYieldOp::create(
            body, loc, arith::BitcastOp::create(body, loc, intType, combined));
        atomic.replaceAllUsesWith(
            arith::BitcastOp::create(b, loc, floatType, generic.getResult())
                .getResult());
        atomic.erase();
      } else if (!isa<memref::DimOp>(user)) {
        return user->emitOpError("uses a buffer whose float atomics are "
                                 "emulated with integer compare-exchange; "
                                 "only loads, stores, float atomics and dims "
                                 "can be rewritten");
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Atomics on 8- and 16-bit elements
//===----------------------------------------------------------------------===//

/// The index of the word holding element `index`, and the element's bit
/// offset in it (i32), for elements of `width` bits.
static std::pair<Value, Value> wordAndShift(OpBuilder &b, Location loc,
                                            Value index, unsigned width) {
  unsigned lanes = 32 / width;
  Value lanesIndex = arith::ConstantIndexOp::create(b, loc, lanes);
  Value word = arith::DivUIOp::create(b, loc, index, lanesIndex);
  Value lane = arith::RemUIOp::create(b, loc, index, lanesIndex);
  Value lane32 =
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), lane);
  Value shift = arith::MulIOp::create(
      b, loc, lane32, arith::ConstantIntOp::create(b, loc, width, 32));
  return {word, shift};
}

/// The element of `type` at bit offset `shift` of the i32 `word`.
static Value extractElement(OpBuilder &b, Location loc, Value word,
                            Value shift, IntegerType type) {
  return arith::TruncIOp::create(
      b, loc, type, arith::ShRUIOp::create(b, loc, word, shift));
}

/// `word` with the element at bit offset `shift` replaced by `element`.
static Value insertElement(OpBuilder &b, Location loc, Value word,
                           Value shift, Value element) {
  unsigned width = element.getType().getIntOrFloatBitWidth();
  Value ones = arith::ConstantIntOp::create(b, loc, (1u << width) - 1, 32);
  Value keep = arith::XOrIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, ones, shift),
      arith::ConstantIntOp::create(b, loc, -1, 32));
  Value placed = arith::ShLIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, b.getI32Type(), element), shift);
  return arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, word, keep), placed);
}

/// Vulkan has atomics on 32- and 64-bit integers only. A buffer of 8- or
/// 16-bit integers (bf16 or f16 bits, after nabla-emulate-bf16 and
/// emulateFloatAtomicAdd made their atomics compare-exchange loops on the
/// bits) that an atomic updates becomes a buffer of the 32-bit words holding
/// them: a load extracts the element's bits; a store clears and sets them
/// with two word atomics, since another thread may update the other
/// elements of the word at the same time; an atomic runs its compare-exchange
/// on the word, the body combining the extracted element.
LogicalResult nabla::emulateNarrowAtomics(gpu::GPUModuleOp module) {
  auto isNarrow = [](Type type) {
    auto integer = dyn_cast<IntegerType>(type);
    return integer && (integer.getWidth() == 8 || integer.getWidth() == 16);
  };
  llvm::SetVector<Value> buffers;
  SmallVector<memref::AtomicRMWOp> atomics;
  WalkResult walk = module.walk([&](Operation *op) {
    Value buffer;
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op))
      buffer = atomic.getMemref();
    else if (auto generic = dyn_cast<memref::GenericAtomicRMWOp>(op))
      buffer = generic.getMemref();
    auto type = buffer ? cast<MemRefType>(buffer.getType()) : MemRefType();
    if (!type || !isNarrow(type.getElementType()))
      return WalkResult::advance();
    if (!isRootBuffer(buffer) || type.getRank() != 1 ||
        !type.getLayout().isIdentity()) {
      op->emitOpError("updates 8- or 16-bit elements atomically, which the "
                      "SPIR-V target emulates on 32-bit words of a kernel "
                      "parameter or allocation of rank 1, not on a view");
      return WalkResult::interrupt();
    }
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op))
      atomics.push_back(atomic);
    buffers.insert(buffer);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Integer atomics on narrow elements: compare-exchange loops as well.
  for (memref::AtomicRMWOp atomic : atomics)
    nabla::expandToGenericAtomic(atomic);
  for (Value buffer : buffers) {
    auto type = cast<MemRefType>(buffer.getType());
    auto element = cast<IntegerType>(type.getElementType());
    unsigned width = element.getWidth(), lanes = 32 / width;
    int64_t words = type.isDynamicDim(0)
                        ? ShapedType::kDynamic
                        : llvm::divideCeil(type.getDimSize(0), lanes);
    IntegerType i32 = IntegerType::get(module.getContext(), 32);
    retypeBuffer(buffer, MemRefType::get({words}, i32, MemRefLayoutAttrInterface(),
                                         type.getMemorySpace()));
    for (Operation *user : llvm::make_early_inc_range(buffer.getUsers())) {
      OpBuilder b(user);
      Location loc = user->getLoc();
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        auto [word, shift] = wordAndShift(b, loc, load.getIndices()[0], width);
        Value bits = memref::LoadOp::create(b, loc, buffer, word);
        load.replaceAllUsesWith(extractElement(b, loc, bits, shift, element));
        load.erase();
      } else if (auto store = dyn_cast<memref::StoreOp>(user)) {
        auto [word, shift] =
            wordAndShift(b, loc, store.getIndices()[0], width);
        Value cleared = insertElement(
            b, loc, arith::ConstantIntOp::create(b, loc, -1, 32), shift,
            arith::ConstantIntOp::create(b, loc, 0, width));
        Value placed = insertElement(
            b, loc, arith::ConstantIntOp::create(b, loc, 0, 32), shift,
            store.getValue());
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::andi,
                                    cleared, buffer, word);
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::ori, placed,
                                    buffer, word);
        store.erase();
      } else if (auto old = dyn_cast<memref::GenericAtomicRMWOp>(user)) {
        auto [word, shift] = wordAndShift(b, loc, old.getIndices()[0], width);
        auto generic = memref::GenericAtomicRMWOp::create(b, loc, buffer, word);
        OpBuilder body = OpBuilder::atBlockEnd(generic.getBody());
        Value current = extractElement(body, loc, generic.getCurrentValue(),
                                       shift, element);
        IRMapping mapping;
        mapping.map(old.getCurrentValue(), current);
        for (Operation &op : old.getAtomicBody().front().without_terminator())
          body.clone(op, mapping);
        auto yield = cast<memref::AtomicYieldOp>(
            old.getAtomicBody().front().getTerminator());
        memref::AtomicYieldOp::create(
            body, loc,
            insertElement(body, loc, generic.getCurrentValue(), shift,
                          mapping.lookupOrDefault(yield.getResult())));
        old.replaceAllUsesWith(
            extractElement(b, loc, generic.getResult(), shift, element));
        old.erase();
      } else {
        return user->emitOpError(
            "uses a buffer whose 8- or 16-bit atomics are emulated on 32-bit "
            "words; only its loads, stores and atomics can be rewritten");
      }
    }
  }
  return success();
}

namespace {

/// The scope of an atomic on `memref`: the workgroup for workgroup memory,
/// the device otherwise; std::nullopt before storage classes are assigned.
std::optional<spirv::Scope> getAtomicScope(MemRefType memref) {
  auto storage =
      dyn_cast_or_null<spirv::StorageClassAttr>(memref.getMemorySpace());
  if (!storage)
    return std::nullopt;
  return storage.getValue() == spirv::StorageClass::Workgroup
             ? spirv::Scope::Workgroup
             : spirv::Scope::Device;
}

/// Lowers `memref.atomic_rmw addf` to `spirv.EXT.AtomicFAdd` with device (or,
/// on workgroup memory, workgroup) scope and relaxed semantics: adjoint
/// accumulation needs atomicity, ordering comes from barriers. Adds the
/// target environment cannot do natively were emulated before conversion.
struct AtomicAddFToSPIRV final
    : public OpConversionPattern<memref::AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(memref::AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getKind() != arith::AtomicRMWKind::addf)
      return rewriter.notifyMatchFailure(op, "not a float add");
    const auto &converter = *getTypeConverter<SPIRVTypeConverter>();
    Type valueType = converter.convertType(op.getType());
    if (!valueType)
      return rewriter.notifyMatchFailure(op, "unsupported value type");

    spirv::TargetEnv env(converter.getTargetEnv());
    spirv::Capability capability = op.getType().isF64()
                                       ? spirv::Capability::AtomicFloat64AddEXT
                                       : spirv::Capability::AtomicFloat32AddEXT;
    if (!op.getType().isF32() && !op.getType().isF64())
      return op.emitOpError("float atomic add is supported on f32 and f64 "
                            "only by the SPIR-V target");
    // emulateFloatAtomicAdd rewrote every add the environment cannot do.
    if (!env.allows(capability) ||
        !env.allows(spirv::Extension::SPV_EXT_shader_atomic_float_add))
      return rewriter.notifyMatchFailure(op, "no native float atomic add");

    MemRefType memrefType = op.getMemRefType();
    std::optional<spirv::Scope> scope = getAtomicScope(memrefType);
    if (!scope)
      return rewriter.notifyMatchFailure(op, "memref has no storage class");
    Value pointer =
        spirv::getElementPtr(converter, memrefType, adaptor.getMemref(),
                             adaptor.getIndices(), op.getLoc(), rewriter);
    if (!pointer)
      return rewriter.notifyMatchFailure(op, "cannot compute the address");
    rewriter.replaceOpWithNewOp<spirv::EXTAtomicFAddOp>(
        op, valueType, pointer, *scope, spirv::MemorySemantics::None,
        adaptor.getValue());
    return success();
  }
};

/// Lowers integer `memref.atomic_rmw` kinds to their SPIR-V atomics with
/// relaxed semantics, like the float add above. memref.atomic_rmw promises
/// atomicity, not ordering; upstream's AcquireRelease semantics also trip
/// lavapipe, which skips the code after a subgroup-divergent loop holding
/// such an atomic (found by difftest, test/Difftest/regressions).
struct AtomicIntegerToSPIRV final
    : public OpConversionPattern<memref::AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;

  template <typename SPIRVOp>
  static Value create(ConversionPatternRewriter &rewriter, Location loc,
                      Type type, Value pointer, spirv::Scope scope,
                      Value value) {
    return SPIRVOp::create(rewriter, loc, type, pointer, scope,
                           spirv::MemorySemantics::None, value);
  }

  LogicalResult
  matchAndRewrite(memref::AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const auto &converter = *getTypeConverter<SPIRVTypeConverter>();
    auto valueType =
        dyn_cast_or_null<IntegerType>(converter.convertType(op.getType()));
    if (!valueType)
      return rewriter.notifyMatchFailure(op, "not an integer atomic");
    MemRefType memrefType = op.getMemRefType();
    std::optional<spirv::Scope> scope = getAtomicScope(memrefType);
    if (!scope)
      return rewriter.notifyMatchFailure(op, "memref has no storage class");
    Value pointer =
        spirv::getElementPtr(converter, memrefType, adaptor.getMemref(),
                             adaptor.getIndices(), op.getLoc(), rewriter);
    if (!pointer)
      return rewriter.notifyMatchFailure(op, "cannot compute the address");
    Location loc = op.getLoc();
    Value value = adaptor.getValue();
    Value result;
    switch (op.getKind()) {
    case arith::AtomicRMWKind::addi:
      result = create<spirv::AtomicIAddOp>(rewriter, loc, valueType, pointer,
                                           *scope, value);
      break;
    case arith::AtomicRMWKind::maxs:
      result = create<spirv::AtomicSMaxOp>(rewriter, loc, valueType, pointer,
                                           *scope, value);
      break;
    case arith::AtomicRMWKind::maxu:
      result = create<spirv::AtomicUMaxOp>(rewriter, loc, valueType, pointer,
                                           *scope, value);
      break;
    case arith::AtomicRMWKind::mins:
      result = create<spirv::AtomicSMinOp>(rewriter, loc, valueType, pointer,
                                           *scope, value);
      break;
    case arith::AtomicRMWKind::minu:
      result = create<spirv::AtomicUMinOp>(rewriter, loc, valueType, pointer,
                                           *scope, value);
      break;
    case arith::AtomicRMWKind::andi:
      result = create<spirv::AtomicAndOp>(rewriter, loc, valueType, pointer,
                                          *scope, value);
      break;
    case arith::AtomicRMWKind::ori:
      result = create<spirv::AtomicOrOp>(rewriter, loc, valueType, pointer,
                                         *scope, value);
      break;
    case arith::AtomicRMWKind::xori:
      result = create<spirv::AtomicXorOp>(rewriter, loc, valueType, pointer,
                                          *scope, value);
      break;
    case arith::AtomicRMWKind::assign:
      result = create<spirv::AtomicExchangeOp>(rewriter, loc, valueType,
                                               pointer, *scope, value);
      break;
    default:
      return rewriter.notifyMatchFailure(op, "kind left to upstream");
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers `memref.generic_atomic_rmw` on an integer buffer to a
/// compare-exchange loop: load the current value, compute the new one with
/// the op's body, `spirv.AtomicCompareExchange`, and retry with the value
/// seen until no other thread intervened.
struct GenericAtomicRMWToSPIRV final
    : public OpConversionPattern<memref::GenericAtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(memref::GenericAtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const auto &converter = *getTypeConverter<SPIRVTypeConverter>();
    auto valueType =
        dyn_cast_or_null<IntegerType>(converter.convertType(op.getType()));
    if (!valueType)
      return rewriter.notifyMatchFailure(op, "not an integer buffer");
    MemRefType memrefType = op.getMemref().getType();
    std::optional<spirv::Scope> scope = getAtomicScope(memrefType);
    if (!scope)
      return rewriter.notifyMatchFailure(op, "memref has no storage class");
    Location loc = op.getLoc();
    Value pointer =
        spirv::getElementPtr(converter, memrefType, adaptor.getMemref(),
                             adaptor.getIndices(), loc, rewriter);
    if (!pointer)
      return rewriter.notifyMatchFailure(op, "cannot compute the address");
    Value initial = spirv::LoadOp::create(rewriter, loc, pointer);

    bool hasUses = !op->use_empty();
    auto loop = spirv::LoopOp::create(
        rewriter, loc, hasUses ? TypeRange{valueType} : TypeRange{},
        spirv::LoopControl::None);
    loop.addEntryAndMergeBlock(rewriter);
    Region &body = loop.getBody();
    auto *header = new Block();
    auto *retry = new Block();
    header->addArgument(valueType, loc);
    retry->addArgument(valueType, loc);
    body.getBlocks().insert(std::next(body.begin()), header);
    body.getBlocks().insert(std::prev(body.end()), retry);
    Value current = header->getArgument(0);

    rewriter.setInsertionPointToEnd(loop.getEntryBlock());
    spirv::BranchOp::create(rewriter, loc, header, initial);

    // The op's body computes the new value from the current one.
    Block &compute = op.getAtomicBody().front();
    auto yield = cast<memref::AtomicYieldOp>(compute.getTerminator());
    Value desired = yield.getResult();
    rewriter.inlineBlockBefore(&compute, header, header->end(), current);
    rewriter.eraseOp(yield);
    rewriter.setInsertionPointToEnd(header);
    Value desiredConverted = rewriter.getRemappedValue(desired);
    if (!desiredConverted)
      desiredConverted = desired;
    Value seen = spirv::AtomicCompareExchangeOp::create(
        rewriter, loc, valueType, pointer, *scope, spirv::MemorySemantics::None,
        spirv::MemorySemantics::None, desiredConverted, current);
    Value done = spirv::IEqualOp::create(rewriter, loc, seen, current);
    spirv::BranchConditionalOp::create(rewriter, loc, done,
                                       loop.getMergeBlock(), ValueRange{},
                                       retry, ValueRange{seen});
    rewriter.setInsertionPointToEnd(retry);
    spirv::BranchOp::create(rewriter, loc, header, retry->getArgument(0));
    if (hasUses) {
      Operation *merge = loop.getMergeBlock()->getTerminator();
      merge->setOperands(current);
    }
    rewriter.replaceOp(op, loop->getResults());
    return success();
  }
};

} // namespace

void nabla::populateAtomicRMWFloatToSPIRVPatterns(
    const SPIRVTypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<AtomicAddFToSPIRV>(typeConverter, patterns.getContext(),
                                  /*benefit=*/2);
  patterns.add<GenericAtomicRMWToSPIRV>(typeConverter, patterns.getContext());
  patterns.add<AtomicIntegerToSPIRV>(typeConverter, patterns.getContext(),
                                     /*benefit=*/2);
}
