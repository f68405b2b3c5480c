//===- TestDialect.h - A stand-in frontend dialect --------------*- C++ -*-===//
//
// The `nabla_test` dialect, its derivative models and its lowering pass.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TEST_DIALECT_TESTDIALECT_H
#define NABLA_TEST_DIALECT_TESTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "TestDialect.h.inc"

#define GET_OP_CLASSES
#include "TestOps.h.inc"

namespace nabla::test {

/// Registers the dialect and, as a separate registry extension (what a
/// frontend does), the derivative rule of `nabla_test.cube`.
void registerTestDialect(mlir::DialectRegistry &registry);

/// Registers `nabla-test-lower`, which rewrites the test ops into arith ops
/// so that kernels using them can be compiled and run.
void registerTestPasses();

/// Registers nabla-test-internal-error (TestInternalError.cpp).
void registerTestInternalError();

} // namespace nabla::test

#endif // NABLA_TEST_DIALECT_TESTDIALECT_H
