//===- SplitDerivative.h - Split mode: augmented forward and reverse -*- C++ -*-===//
//
// Split mode cuts a reverse-mode derivative function (generated with
// LoopReversalOptions::split) where its forward sweep ends:
//  - the augmented forward keeps the forward sweep and stores into the
//    global tape (nabla.tape) every value the reverse sweep uses that it
//    cannot recompute from the arguments;
//  - the reverse recreates the tape's slots in the same order (so both
//    kernels lay the tape out alike), loads those values, and runs the
//    reverse sweep.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_SPLITDERIVATIVE_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_SPLITDERIVATIVE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace nabla {

/// The attribute of a `nabla.autodiff` request asking for one half of split
/// mode: "augmented" (the forward sweep, writing the tape) or "reverse".
inline constexpr llvm::StringLiteral kSplitAttrName = "nabla.split";

/// The unit attribute marking tape ops of split-mode functions, and the
/// argument attribute of the caller-owned tape parameter of split kernels:
/// such a kernel's tape is that parameter (nabla-materialize-tapes).
inline constexpr llvm::StringLiteral kSplitTapeAttrName = "nabla.split_tape";

/// Builds `augmented` and `reverse` (inserted into `symbols`) from the
/// split-mode derivative `combined`, whose forward sweep ends at
/// `forwardEnd` (null: it emitted nothing). A value the reverse needs that
/// no slot can hold (a private buffer, a vector) is a located error.
mlir::LogicalResult splitDerivative(mlir::func::FuncOp combined,
                                    mlir::Operation *forwardEnd,
                                    mlir::SymbolTable &symbols,
                                    llvm::StringRef augmented,
                                    llvm::StringRef reverse);

/// The words of a split-mode half's tape when every slot count is a
/// constant (Enzyme's caller-allocated tape has a size known at compile
/// time); else a located error on `request`.
mlir::FailureOr<int64_t> callerTapeWords(mlir::func::FuncOp half,
                                         mlir::Operation *request);

/// A copy of the split-mode half `source` named `name` whose tape is the
/// caller's: two more parameters, the tape (`tapeType`: a rank-1 memref of
/// i8, i32 or f32) and where this call's tape starts in it (elements); the
/// words follow one another from there (one thread's tape is contiguous, as
/// Enzyme lays it out).
mlir::FailureOr<mlir::func::FuncOp>
lowerToCallerTape(mlir::func::FuncOp source, mlir::SymbolTable &symbols,
                  llvm::StringRef name, mlir::Type tapeType,
                  mlir::Operation *request);

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_SPLITDERIVATIVE_H
