//===- ModuleGlobals.h - Module globals the runtime owns --------*- C++ -*-===//
//
// The record nabla-bind-module-globals leaves on a SPIR-V gpu.module (and its
// binary's object keeps): the globals that became runtime-owned storage
// buffers and the kernels that bind them. nabla-compile writes it to the
// manifest and nabla-wrap-host-objects into host objects, in one JSON form:
//
//   {"buffers": [{"name": N, "element": T, "count": C, "bytes": B,
//                 "constant": bool, "data": "HEX"}...],
//    "kernels": {"K": [N...]}}
//
// "data" is the initial contents, little-endian, two hex digits per byte
// (absent: zeros); a kernel's list is the order of its global bindings,
// which follow its size bindings and precede its printf buffer.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_MODULEGLOBALS_H
#define NABLA_SUPPORT_MODULEGLOBALS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/JSON.h"

namespace nabla {

/// The gpu.module attribute (kept in the object's properties).
inline constexpr llvm::StringLiteral kModuleGlobalsAttrName =
    "nabla.module_globals";
/// The argument attribute of a kernel parameter that binds a global.
inline constexpr llvm::StringLiteral kModuleGlobalArgAttrName =
    "nabla.module_global";

/// The JSON form above of a `nabla.module_globals` attribute.
llvm::json::Object describeModuleGlobals(mlir::DictionaryAttr info);

} // namespace nabla

#endif // NABLA_SUPPORT_MODULEGLOBALS_H
