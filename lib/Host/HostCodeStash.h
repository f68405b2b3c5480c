//===- HostCodeStash.h - Where host code waits while kernels lower -*- C++
//-*-===//
//
// The nested module nabla-set-aside-host-code puts host code in and
// nabla-restore-host-code takes it back from. Private to lib/Host.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_HOST_HOSTCODESTASH_H
#define NABLA_LIB_HOST_HOSTCODESTASH_H

#include "mlir/IR/BuiltinOps.h"

namespace nabla {

/// The name of the nested module holding set-aside host code.
inline constexpr llvm::StringLiteral kHostCodeStashName = "nabla_host_code";

/// The nested module holding set-aside host code, if any.
inline mlir::ModuleOp findHostCodeStash(mlir::ModuleOp module) {
  for (auto nested : module.getOps<mlir::ModuleOp>())
    if (nested.getSymName() == kHostCodeStashName)
      return nested;
  return nullptr;
}

} // namespace nabla

#endif // NABLA_LIB_HOST_HOSTCODESTASH_H
