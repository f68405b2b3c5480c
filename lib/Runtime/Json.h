//===- Json.h - Parse JSON text with located errors -------------*- C++ -*-===//
//
// The runtime links neither LLVM nor MLIR (nabla-launch must start where only
// a GPU driver is installed), so it reads manifest.json with nlohmann/json
// (Debian's header-only nlohmann-json3-dev) instead of llvm::json. This header
// is private to lib/Runtime: installed headers do not expose nlohmann.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_JSON_H
#define NABLA_LIB_RUNTIME_JSON_H

#include <nlohmann/json.hpp>

#include <string>

namespace nabla::runtime {

/// Parses `text` (strict RFC 8259: no comments, valid UTF-8) into `result`
/// without throwing. On malformed text returns false and sets `error` to
/// where and why, e.g. "parse error at line 3, column 5: syntax error while
/// parsing object key - unexpected '}'; expected string literal".
bool parseJson(const std::string &text, nlohmann::json &result,
               std::string &error);

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_JSON_H
