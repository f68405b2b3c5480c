//===- RelocOps.h - Operations of the reloc dialect -------------*- C++ -*-===//
//
// Declares `reloc.global`, `reloc.get_global` and `reloc.addressof`.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOCOPS_H
#define NABLA_DIALECT_RELOC_IR_RELOCOPS_H

#include "nabla/Dialect/Reloc/IR/RelocAttrs.h"
#include "nabla/Dialect/Reloc/IR/RelocDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "nabla/Dialect/Reloc/IR/RelocOps.h.inc"

namespace nabla::reloc {

/// The key with every character outside [A-Za-z0-9_] replaced by '_': the
/// symbol `defer` gives a record ("Main.:x" → "Main__x").
std::string getKeySymbol(llvm::StringRef key);

/// The writable global `patch` gives a record: `__reloc_<key symbol>_<hash>`,
/// with a hash of the key so that keys sanitizing alike stay apart. Loaders
/// find it by this name (cuModuleGetGlobal, hipModuleGetGlobal).
std::string getPatchSymbol(llvm::StringRef key);

/// The argument attribute naming the record a `table` kernel parameter
/// carries, and the attribute `defer`/`patch` put on the globals they create.
inline constexpr llvm::StringLiteral kRecordKeyAttrName = "reloc.key";

} // namespace nabla::reloc

#endif // NABLA_DIALECT_RELOC_IR_RELOCOPS_H
