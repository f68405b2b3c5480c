//===- InliningUtils.cpp - Inline device calls unconditionally ------------===//
//
// Terminator handling and the body-cloning callback shared by Nabla's
// inlining users.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/InliningUtils.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

void nabla::InlineEverything::handleTerminator(Operation *op,
                                               Block *newDest) const {
  // Every block's terminator comes here: only returns leave the callee.
  if (!op->hasTrait<OpTrait::ReturnLike>())
    return;
  OpBuilder builder(op);
  // An LLVM function's return stays in the LLVM dialect (the raise reads
  // LLVM control flow).
  if (isa<LLVM::ReturnOp>(op))
    LLVM::BrOp::create(builder, op->getLoc(), op->getOperands(), newDest);
  else
    cf::BranchOp::create(builder, op->getLoc(), newDest, op->getOperands());
  op->erase();
}

void nabla::InlineEverything::handleTerminator(Operation *op,
                                               ValueRange values) const {
  for (auto [from, to] : llvm::zip(values, op->getOperands()))
    from.replaceAllUsesWith(to);
}

void nabla::cloneInlinedBody(OpBuilder &, Region *src, Block *inlineBlock,
                             Block *postInsertBlock, IRMapping &mapper,
                             bool shouldCloneInlinedRegion) {
  Region *insertRegion = inlineBlock->getParent();
  if (shouldCloneInlinedRegion) {
    src->cloneInto(insertRegion, postInsertBlock->getIterator(), mapper);
    return;
  }
  insertRegion->getBlocks().splice(postInsertBlock->getIterator(),
                                   src->getBlocks(), src->begin(), src->end());
}

LogicalResult nabla::inlineFuncCalls(
    Operation *function,
    function_ref<FailureOr<func::FuncOp>(func::CallOp)> select) {
  InlineEverything inliner(function->getContext());
  for (unsigned round = 0;; ++round) {
    func::CallOp call;
    func::FuncOp callee;
    bool stopped = false;
    function->walk([&](func::CallOp op) {
      FailureOr<func::FuncOp> chosen = select(op);
      if (failed(chosen)) {
        stopped = true;
        return WalkResult::interrupt();
      }
      if (!*chosen)
        return WalkResult::advance();
      call = op;
      callee = *chosen;
      return WalkResult::interrupt();
    });
    if (stopped)
      return failure();
    if (!call)
      return success();
    if (round > 1000)
      return call.emitOpError("recursive call to @")
             << call.getCallee() << " cannot be differentiated";
    if (failed(inlineCall(inliner, cloneInlinedBody, call, callee,
                          &callee.getBody())))
      return call.emitOpError("cannot be inlined for differentiation");
    call.erase();
  }
}
