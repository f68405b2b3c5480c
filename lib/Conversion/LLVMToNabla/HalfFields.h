//===- HalfFields.h - 16-bit fields of packed integers (internal) -*- C++ -*-===//
//
// CUDA code moves halves (f16, bf16) as 16-bit fields of wider integers:
// `__halves2bfloat162` packs two into an i32, llm.c's Packed128 eight into
// an int4, cuda_bf16's atomics compare-exchange the i32 word of a pair. The
// raise recognises and builds these joins and splits in one form, shared by
// the reinterpreted accesses, the inline assembly and the compare-exchange
// loops: a join is or(zext(f0), shl(zext(f1), 16), ...), field k of a word
// is trunc(lshr(word, 16 k)) to i16.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_CONVERSION_LLVMTONABLA_HALFFIELDS_H
#define NABLA_LIB_CONVERSION_LLVMTONABLA_HALFFIELDS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace nabla::raise {

/// A wider integer type made of 16-bit fields (i32, i64), or null.
mlir::IntegerType packedHalvesType(mlir::Type type);

/// The integer of `type` whose 16-bit fields are `fields`, least significant
/// first.
mlir::Value joinHalves(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::IntegerType type,
                       llvm::ArrayRef<mlir::Value> fields);

/// The `k`th 16-bit field of `wide` (an i16).
mlir::Value extractHalf(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value wide, unsigned k);

/// The 16-bit fields of a join (an or-tree of zext(x) and shl(zext(x), 16 k)
/// in any order, every field present once), least significant first; or
/// failure.
mlir::LogicalResult
matchJoinedHalves(mlir::Value wide, llvm::SmallVectorImpl<mlir::Value> &fields);

/// The packed integer and field number a 16-bit value extracts (trunc(w) or
/// trunc(lshr(w, 16 k))), or nullopt.
std::optional<std::pair<mlir::Value, unsigned>>
extractedHalf(mlir::Value bits);

} // namespace nabla::raise

#endif // NABLA_LIB_CONVERSION_LLVMTONABLA_HALFFIELDS_H
