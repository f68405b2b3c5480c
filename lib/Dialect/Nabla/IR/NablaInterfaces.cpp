//===- NablaInterfaces.cpp - Interfaces of the nabla dialect --------------===//
//
// The generated definitions of `DifferentiableOpInterface`.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.cpp.inc"
