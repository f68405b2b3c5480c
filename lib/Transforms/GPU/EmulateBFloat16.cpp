//===- EmulateBFloat16.cpp - bf16 kept as its bits on targets without it ---===//
//
// Mixed-precision kernels (CUDA's `__nv_bfloat16`, raised to `memref<?xbf16>`
// and `arith.extf`/`truncf`) keep activations in bf16. SPIR-V for Vulkan and
// Metal has no bf16 a device must support, so the kernel is rewritten in
// three steps:
//   1. arithmetic on bf16 (what differentiation makes: the adjoint's sums in
//      a bf16 shadow) runs in f32 and is rounded back, one rounding per op as
//      the bf16 op has; f64 <-> bf16 conversions go through f32;
//   2. the f32 <-> bf16 conversions become integer operations on the bits
//      (upstream's bf16 expansion: round to nearest even, NaN kept);
//   3. every remaining bf16 value, memref, constant and signature holds the
//      bits as i16, and the bitcasts between them vanish.
// A bf16 atomic read-modify-write becomes a compare-exchange loop on the
// bits, which the SPIR-V conversion runs on the 32-bit word holding them
// (Vulkan has no 16-bit atomics).
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"
#include "nabla/Transforms/GenericAtomics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

#include <set>

namespace nabla {
#define GEN_PASS_DEF_EMULATEBFLOAT16
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

bool hasBF16(Type type) {
  if (auto function = dyn_cast<FunctionType>(type))
    return llvm::any_of(function.getInputs(), hasBF16) ||
           llvm::any_of(function.getResults(), hasBF16);
  return isa<BFloat16Type>(getElementTypeOrSelf(type));
}

bool touchesBF16(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), hasBF16) ||
         llvm::any_of(op->getResultTypes(), hasBF16);
}

/// `type` with bf16 elements replaced by `to`.
Type replaceBF16(Type type, Type to) {
  if (isa<BFloat16Type>(type))
    return to;
  if (auto vector = dyn_cast<VectorType>(type))
    return isa<BFloat16Type>(vector.getElementType()) ? vector.clone(to)
                                                       : type;
  if (auto memref = dyn_cast<MemRefType>(type))
    return isa<BFloat16Type>(memref.getElementType()) ? memref.clone(to)
                                                       : type;
  if (auto function = dyn_cast<FunctionType>(type)) {
    auto convert = [&](TypeRange types) {
      return llvm::map_to_vector(types,
                                 [&](Type t) { return replaceBF16(t, to); });
    };
    return FunctionType::get(type.getContext(), convert(function.getInputs()),
                             convert(function.getResults()));
  }
  return type;
}

/// Step 0: bf16 atomic read-modify-writes become compare-exchange loops
/// (memref.generic_atomic_rmw) whose bodies combine in bf16, so the steps
/// below make them loops on the bits; the SPIR-V conversion runs them on the
/// 32-bit word holding the element (emulateNarrowAtomics), Vulkan having no
/// 16-bit atomics.
void genericAtomics(Operation *root) {
  SmallVector<memref::AtomicRMWOp> atomics;
  root->walk([&](memref::AtomicRMWOp op) {
    if (isa<BFloat16Type>(op.getType()))
      atomics.push_back(op);
  });
  for (memref::AtomicRMWOp atomic : atomics)
    nabla::expandToGenericAtomic(atomic);
}

/// Step 1: arithmetic on bf16 in f32.
void promoteArithmetic(Operation *root) {
  MLIRContext *context = root->getContext();
  Type f32 = Float32Type::get(context);
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (!touchesBF16(op))
      return;
    bool arithmetic = isa<arith::ArithDialect, math::MathDialect>(
                          op->getDialect()) &&
                      !isa<arith::ConstantOp, arith::BitcastOp,
                           arith::SelectOp>(op);
    if (arithmetic || isa<gpu::ShuffleOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
      // bf16 -> f32 is the expansion's; bf16 -> f64 widens the f32 exactly.
      if (getElementTypeOrSelf(ext.getType()).isF32())
        continue;
      Value wide = arith::ExtFOp::create(
          b, loc, replaceBF16(ext.getIn().getType(), f32), ext.getIn());
      ext.getInMutable().assign(wide);
      continue;
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
      // f32 -> bf16 is the expansion's; f64 -> bf16 rounds through f32.
      Type source = getElementTypeOrSelf(trunc.getIn().getType());
      if (source.isF32() || !isa<BFloat16Type>(
                                getElementTypeOrSelf(trunc.getType())))
        continue;
      Value narrow = arith::TruncFOp::create(
          b, loc, replaceBF16(trunc.getType(), f32), trunc.getIn());
      trunc.getInMutable().assign(narrow);
      continue;
    }
    IRMapping mapping;
    for (Value operand : op->getOperands())
      if (hasBF16(operand.getType()))
        mapping.map(operand,
                    arith::ExtFOp::create(
                        b, loc, replaceBF16(operand.getType(), f32), operand));
    Operation *wide = b.clone(*op, mapping);
    for (Value result : wide->getResults())
      result.setType(replaceBF16(result.getType(), f32));
    for (auto [old, now] : llvm::zip(op->getResults(), wide->getResults())) {
      Value replacement = now;
      if (hasBF16(old.getType()))
        replacement = arith::TruncFOp::create(b, loc, old.getType(), now);
      old.replaceAllUsesWith(replacement);
    }
    op->erase();
  }
}

/// Step 3: bf16 as i16 bits everywhere. Returns failure after an error.
LogicalResult keepBits(Operation *root) {
  MLIRContext *context = root->getContext();
  Type i16 = IntegerType::get(context, 16);
  SmallVector<Operation *> bitcasts;
  WalkResult walk = root->walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(replaceBF16(arg.getType(), i16));
    for (Value result : op->getResults())
      result.setType(replaceBF16(result.getType(), i16));
    if (auto function = dyn_cast<FunctionOpInterface>(op)) {
      function.setFunctionTypeAttr(
          TypeAttr::get(replaceBF16(function.getFunctionType(), i16)));
    } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      Attribute value = constant.getValue();
      if (auto f = dyn_cast<FloatAttr>(value);
          f && isa<BFloat16Type>(f.getType()))
        constant.setValueAttr(
            IntegerAttr::get(i16, f.getValue().bitcastToAPInt()));
      else if (auto dense = dyn_cast<DenseElementsAttr>(value);
               dense && isa<BFloat16Type>(dense.getElementType()))
        constant.setValueAttr(dense.bitcast(i16));
    } else if (auto global = dyn_cast<memref::GlobalOp>(op)) {
      global.setType(cast<MemRefType>(replaceBF16(global.getType(), i16)));
      if (auto dense =
              dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
          dense && isa<BFloat16Type>(dense.getElementType()))
        global.setInitialValueAttr(dense.bitcast(i16));
    } else if (isa<arith::BitcastOp>(op) &&
               op->getOperand(0).getType() == op->getResult(0).getType()) {
      bitcasts.push_back(op);
    }
    for (NamedAttribute attr : op->getAttrs())
      if (auto type = dyn_cast<TypeAttr>(attr.getValue());
          type && hasBF16(type.getValue()) && !isa<FunctionOpInterface>(op)) {
        op->emitOpError() << "keeps a bf16 type in '" << attr.getName()
                          << "', which a target without bf16 cannot emulate";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (Operation *op : bitcasts) {
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
  }
  return success();
}

struct EmulateBFloat16
    : public nabla::impl::EmulateBFloat16Base<EmulateBFloat16> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    bool any = false;
    root->walk([&](Operation *op) {
      any |= touchesBF16(op);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          any |= llvm::any_of(block.getArgumentTypes(), hasBF16);
      if (any)
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (!any)
      return;
    genericAtomics(root);
    promoteArithmetic(root);
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return signalPassFailure();
    if (failed(keepBits(root)))
      return signalPassFailure();
  }
};

} // namespace
