//===- ImportLLVMIR.h - Read a tool's input: MLIR or LLVM IR ----*- C++ -*-===//
//
// Nabla's tools take MLIR (`.mlir`) and a frontend's LLVM IR (`.ll` text,
// `.bc` bitcode). LLVM IR is parsed and verified by LLVM, given a location
// per instruction (file:line:col of the `.ll` text, unless it carries its own
// debug locations) and imported into the LLVM dialect in process, the same
// as `mlir-translate --import-llvm`; `--nabla-raise-llvm` (beside this, in
// lib/Conversion/LLVMToNabla) then raises it.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_CONVERSION_LLVMTONABLA_IMPORTLLVMIR_H
#define NABLA_CONVERSION_LLVMTONABLA_IMPORTLLVMIR_H

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
} // namespace mlir

namespace nabla {

/// Whether the input named `fileName` with contents `buffer` is LLVM IR: a
/// bitcode file (by its magic number) or a file named `*.ll` or `*.bc`.
bool isLLVMIRInput(llvm::StringRef fileName, const llvm::MemoryBuffer &buffer);

/// Parses the main buffer of `sourceMgr` as LLVM IR and imports it into the
/// LLVM dialect; null on failure, after a located error (parse and verifier
/// errors at their line). The context needs the LLVM IR import interfaces
/// (registerLLVMIRImport).
mlir::OwningOpRef<mlir::ModuleOp> importLLVMIR(llvm::SourceMgr &sourceMgr,
                                               mlir::MLIRContext *context);

/// Reads the main buffer of `sourceMgr`: importLLVMIR for LLVM IR, otherwise
/// parseCheckedModule. `isLLVMIR`, when given, says which it was.
mlir::OwningOpRef<mlir::ModuleOp> parseInputModule(llvm::SourceMgr &sourceMgr,
                                                   mlir::MLIRContext *context,
                                                   bool *isLLVMIR = nullptr);

/// Registers the LLVM IR import interfaces of every dialect importLLVMIR may
/// produce (LLVM, NVVM, ROCDL, ...).
void registerLLVMIRImport(mlir::DialectRegistry &registry);

} // namespace nabla

#endif // NABLA_CONVERSION_LLVMTONABLA_IMPORTLLVMIR_H
