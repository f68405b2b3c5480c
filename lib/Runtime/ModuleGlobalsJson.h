//===- ModuleGlobalsJson.h - Read a module's global buffers -----*- C++ -*-===//
//
// The JSON form of a SPIR-V module's runtime-owned globals
// (nabla/Support/ModuleGlobals.h), as the manifest's "module_globals" and a
// host object's description carry it. Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_MODULEGLOBALSJSON_H
#define NABLA_LIB_RUNTIME_MODULEGLOBALSJSON_H

#include "Json.h"

#include "nabla/Runtime/Device.h"

namespace nabla::runtime {

/// Reads `value` into `globals`; false with `error` (naming `path` and what
/// is wrong) if it is malformed: a buffer without a name, an element type or
/// a size, initial data that is not hex or longer than the buffer, a kernel
/// binding a global the list does not have.
bool readModuleGlobals(const nlohmann::json &value, const std::string &path,
                       ModuleGlobals &globals, std::string &error);

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_MODULEGLOBALSJSON_H
