//===- ForwardMode.h - Forward-mode derivative emission ---------*- C++ -*-===//
//
// The JVP emitter of nabla-differentiate.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_FORWARD_FORWARDMODE_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_FORWARD_FORWARDMODE_H

#include "ActivityAnalysis.h"
#include "RecordShadows.h"

namespace nabla {

/// Emits at `builder` (the derivative function's entry) the forward mode of
/// `body` (the prepared callee, returning with `ret`): primal values and
/// tangents, and the return of the derivative function.
mlir::LogicalResult emitForwardDerivative(
    mlir::OpBuilder &builder, mlir::Block &body, mlir::func::ReturnOp ret,
    const Activities &act, llvm::ArrayRef<Activity> args,
    llvm::ArrayRef<Activity> rets, llvm::ArrayRef<mlir::Value> primalArgs,
    llvm::ArrayRef<mlir::Value> shadowArgs, RuleFinder findRule,
    RecordShadows &records);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_FORWARD_FORWARDMODE_H
