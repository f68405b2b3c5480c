//===- NablaInterfaces.cpp - Interfaces of the nabla dialect --------------===//
//
// The generated definitions of `DifferentiableOpInterface`.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.cpp.inc"

using namespace mlir;

nabla::DerivativeEmitter::~DerivativeEmitter() = default;

SmallVector<Value> nabla::DerivativeEmitter::primals(ValueRange values) {
  return llvm::map_to_vector(values, [&](Value v) { return primal(v); });
}
