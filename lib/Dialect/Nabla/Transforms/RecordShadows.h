//===- RecordShadows.h - Shadows of writable relocated objects --*- C++ -*-===//
//
// Relocated host objects are inactive by default. A writable record that a
// differentiated function stores differentiated data into gets a paired
// shadow record (`shadow_of`, key "<key>#shadow") that the loader provides
// next to the object: it holds the object's tangent (forward mode) or
// cotangent (reverse mode), exactly like the shadow of a dup buffer.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_RECORDSHADOWS_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_RECORDSHADOWS_H

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace nabla {

class RecordShadows {
public:
  explicit RecordShadows(mlir::SymbolTable &symbols) : symbols(symbols) {}

  /// The record `memref` is a `reloc.get_global` of (through views), if the
  /// record is writable and holds floats; null otherwise.
  static reloc::GlobalOp getWritableRecord(mlir::Value memref);

  /// Emits at `builder` a `reloc.get_global` of the shadow record of `get`'s
  /// record, creating the shadow record (after its primal) the first time.
  mlir::Value emitShadow(mlir::OpBuilder &builder, reloc::GetGlobalOp get);

private:
  mlir::SymbolTable &symbols;
};

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_RECORDSHADOWS_H
