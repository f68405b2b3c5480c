//===- InliningUtils.h - Inline device calls unconditionally ----*- C++ -*-===//
//
// Device functions are plain single-threaded code of the calling thread, so
// Nabla inlines them without asking each dialect: for SPIR-V (no calling
// convention for memrefs) and before differentiation (nested calls are
// differentiated through their bodies). Shared by nabla-inline-device-calls
// and nabla-differentiate.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TRANSFORMS_INLININGUTILS_H
#define NABLA_TRANSFORMS_INLININGUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/InliningUtils.h"

namespace nabla {

/// Allows inlining everything; a return becomes a branch to the
/// continuation (multi-block callees) or replaces the call's results.
struct InlineEverything : public mlir::InlinerInterface {
  using InlinerInterface::InlinerInterface;

  bool isLegalToInline(mlir::Operation *, mlir::Operation *, bool) const final {
    return true;
  }
  bool isLegalToInline(mlir::Region *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(mlir::Operation *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
  void handleTerminator(mlir::Operation *op, mlir::Block *newDest) const final;
  void handleTerminator(mlir::Operation *op,
                        mlir::ValueRange valuesToRepl) const final;
};

/// The clone callback of mlir::inlineCall: clones (or splices) the callee
/// body between the split halves of the call's block.
void cloneInlinedBody(mlir::OpBuilder &builder, mlir::Region *src,
                      mlir::Block *inlineBlock, mlir::Block *postInsertBlock,
                      mlir::IRMapping &mapper, bool shouldCloneInlinedRegion);

/// Inlines, transitively, the func.call ops of `function` (a copy being
/// differentiated, a kernel whose callees hold global tapes) for which `select` returns the callee to inline (a
/// func.func with a body); it returns null to leave a call, or failure
/// (after a diagnostic) to stop. More than 1000 rounds is recursion, an
/// error.
mlir::LogicalResult inlineFuncCalls(
    mlir::Operation *function,
    llvm::function_ref<mlir::FailureOr<mlir::func::FuncOp>(mlir::func::CallOp)>
        select);

} // namespace nabla

#endif // NABLA_TRANSFORMS_INLININGUTILS_H
