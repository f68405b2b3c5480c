//===- LinearizeKernelMemRefs.cpp - 1-D buffers plus sizes for kernels ----===//
//
// Rewrites dynamic multi-dimensional memref kernel parameters into a 1-D
// buffer and trailing size parameters (the SPIR-V ABI), restoring the shape
// inside the kernel with memref.expand_shape so that the body is unchanged
// (atomics, which alias folding does not handle, index the flat buffer).
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace nabla {
#define GEN_PASS_DEF_LINEARIZEKERNELMEMREFS
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// True for parameters this pass rewrites.
bool needsLinearization(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getRank() >= 2 && !memref.hasStaticShape() &&
         memref.getLayout().isIdentity();
}

struct LinearizeKernelMemRefs
    : public nabla::impl::LinearizeKernelMemRefsBase<LinearizeKernelMemRefs> {
  using Base::Base;

  void runOnOperation() override {
    foldSubviewsIntoAtomics();
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>())
      if (kernel.isKernel())
        linearize(kernel);
  }

  /// Upstream's alias folding moves loads and stores onto a subview's
  /// source but leaves atomics (an adjoint accumulating through a view):
  /// those are resolved here, so that no view survives into SPIR-V.
  void foldSubviewsIntoAtomics() {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](memref::AtomicRMWOp atomic) {
      while (auto view =
                 atomic.getMemref().getDefiningOp<memref::SubViewOp>()) {
        rewriter.setInsertionPoint(atomic);
        SmallVector<Value> indices;
        affine::resolveIndicesIntoOpWithOffsetsAndStrides(
            rewriter, atomic.getLoc(), view.getMixedOffsets(),
            view.getMixedStrides(), view.getDroppedDims(), atomic.getIndices(),
            indices);
        rewriter.modifyOpInPlace(atomic, [&] {
          atomic.getMemrefMutable().assign(view.getSource());
          atomic.getIndicesMutable().assign(indices);
        });
      }
    });
  }

  void linearize(gpu::GPUFuncOp kernel) {
    Block &entry = kernel.getBody().front();
    Location loc = kernel.getLoc();
    auto indexType = IndexType::get(&getContext());
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    unsigned originalCount = kernel.getNumArguments();
    // Size parameters go after the original parameters and before the
    // workgroup/private attributions, which share the entry block.
    unsigned nextSize = originalCount;
    for (unsigned i = 0; i < originalCount; ++i) {
      BlockArgument arg = entry.getArgument(i);
      if (!needsLinearization(arg.getType()))
        continue;
      auto memref = cast<MemRefType>(arg.getType());

      // One trailing index parameter per dynamic size.
      SmallVector<OpFoldResult> sizes;
      for (auto [dim, extent] : llvm::enumerate(memref.getShape())) {
        if (!ShapedType::isDynamic(extent)) {
          sizes.push_back(builder.getIndexAttr(extent));
          continue;
        }
        if (failed(kernel.insertArgument(nextSize, indexType, DictionaryAttr(),
                                         arg.getLoc())))
          return signalPassFailure();
        sizes.push_back(entry.getArgument(nextSize++));
      }

      auto flatType =
          MemRefType::get({ShapedType::kDynamic}, memref.getElementType(),
                          MemRefLayoutAttrInterface(), memref.getMemorySpace());
      arg.setType(flatType);
      SmallVector<Type> inputs(kernel.getArgumentTypes());
      inputs[i] = flatType;
      kernel.setFunctionType(
          FunctionType::get(&getContext(), inputs, kernel.getResultTypes()));
      SmallVector<ReassociationIndices> reassociation(1);
      for (int64_t d = 0; d < memref.getRank(); ++d)
        reassociation[0].push_back(d);
      auto expanded = memref::ExpandShapeOp::create(builder, loc, memref, arg,
                                                    reassociation, sizes);
      arg.replaceAllUsesExcept(expanded.getResult(), expanded);

      // memref.dim of the restored shape is the size parameter itself;
      // atomics, which fold-memref-alias-ops does not see through, address
      // the flat buffer directly (row-major).
      for (Operation *user :
           llvm::make_early_inc_range(expanded.getResult().getUsers())) {
        if (auto atomic = dyn_cast<memref::AtomicRMWOp>(user)) {
          OpBuilder at(atomic);
          Value linear;
          for (auto [d, index] : llvm::enumerate(atomic.getIndices())) {
            Value extent =
                getValueOrCreateConstantIndexOp(at, atomic.getLoc(), sizes[d]);
            linear = linear ? arith::AddIOp::create(
                                  at, atomic.getLoc(),
                                  arith::MulIOp::create(at, atomic.getLoc(),
                                                        linear, extent),
                                  index)
                                  .getResult()
                            : index;
          }
          auto flat = memref::AtomicRMWOp::create(
              at, atomic.getLoc(), atomic.getKind(), atomic.getValue(), arg,
              ValueRange{linear});
          atomic.replaceAllUsesWith(flat.getResult());
          atomic.erase();
          continue;
        }
        auto dim = dyn_cast<memref::DimOp>(user);
        std::optional<int64_t> index =
            dim ? dim.getConstantIndex() : std::nullopt;
        if (!index || *index < 0 || *index >= memref.getRank())
          continue;
        Value size =
            getValueOrCreateConstantIndexOp(builder, loc, sizes[*index]);
        dim.replaceAllUsesWith(size);
        dim.erase();
      }
    }
  }
};

} // namespace
