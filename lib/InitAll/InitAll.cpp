//===- InitAll.cpp - Register every Nabla dialect and pass ----------------===//
//
// Implements the registration entry points declared in nabla/InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "nabla/InitAll.h"

#include "nabla/Conversion/Passes.h"
#include "nabla/Dialect/Nabla/IR/NablaDialect.h"
#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Dialect/Reloc/IR/RelocDialect.h"
#include "nabla/Dialect/Reloc/Transforms/Passes.h"
#include "nabla/Host/Passes.h"
#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void nabla::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<nabla::NablaDialect, nabla::reloc::RelocDialect>();
}

void nabla::registerUpstreamDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllFromLLVMIRTranslations(registry);
}

void nabla::registerAllPasses() {
  registerNablaConversionPasses();
  registerNablaDialectPasses();
  reloc::registerRelocTransformsPasses();
  registerNablaHostPasses();
  registerNablaTransformsPasses();
  registerNablaPipelines();
}
