//===- SourceChecks.h - Reject input upstream's parser crashes on -*- C++
//-*-===//
//
// MLIR's parser recurses once per nested bracket and trusts some attribute
// spellings; a hostile or corrupted file can overflow the stack or crash it.
// Nabla's tools scan the raw text first and report such input with a
// location, so that the parser only ever sees text it handles.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_SOURCECHECKS_H
#define NABLA_SUPPORT_SOURCECHECKS_H

#include "nabla/Support/Limits.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

namespace llvm {
class MemoryBuffer;
class SourceMgr;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class MLIRContext;
class Operation;
} // namespace mlir

namespace nabla {

/// Scans buffer `bufferId` of `sourceMgr` and reports the first construct
/// upstream's parser would crash on (nesting deeper than kMaxSourceNesting, a
/// dense array of `index`) as an error at its location.
mlir::LogicalResult checkMLIRSource(llvm::SourceMgr &sourceMgr,
                                    unsigned bufferId);

/// Reports ops whose attribute that always has a value (a default-valued
/// one) came out of the parser null: MLIR stores an inherent attribute given
/// with a value of the wrong kind (`addr_space = i32` on llvm.mlir.global) as
/// null, and upstream verifiers then dereference it (found by fuzzing).
mlir::LogicalResult checkInherentAttributes(mlir::Operation *root);

/// Parses buffer `bufferId` of `sourceMgr` (each `// -----` chunk on its own,
/// as -split-input-file does) without verifying, in a context of
/// `registry`, and reports what checkInherentAttributes finds through
/// `sourceMgr`. For tools that parse later with verification (nabla-opt).
mlir::LogicalResult
checkParsedMLIRSource(llvm::SourceMgr &sourceMgr, unsigned bufferId,
                      const mlir::DialectRegistry &registry);

/// checkMLIRSource, then parses the main buffer of `sourceMgr` as a module;
/// then checkInherentAttributes, then verifies; null on failure (diagnostics
/// go to the context's handler).
mlir::OwningOpRef<mlir::ModuleOp>
parseCheckedModule(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context);

} // namespace nabla

#endif // NABLA_SUPPORT_SOURCECHECKS_H
