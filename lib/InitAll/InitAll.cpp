//===- InitAll.cpp - Register every Nabla dialect and pass ----------------===//
//
// Implements the registration entry points declared in nabla/InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "nabla/InitAll.h"

#include "nabla/Dialect/Nabla/IR/NablaDialect.h"
#include "nabla/Dialect/Reloc/IR/RelocDialect.h"

#include "mlir/IR/DialectRegistry.h"

void nabla::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<nabla::NablaDialect, nabla::reloc::RelocDialect>();
}

void nabla::registerAllPasses() {
  // Passes and pipelines register here as they are added.
}
