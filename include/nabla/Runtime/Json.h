//===- Json.h - A minimal JSON reader for the runtime -----------*- C++ -*-===//
//
// The runtime links neither LLVM nor MLIR (nabla-launch must start where only
// a GPU driver is installed), so it reads manifest.json with this small
// recursive-descent parser instead of llvm::json.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_JSON_H
#define NABLA_RUNTIME_JSON_H

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nabla::runtime {

/// A parsed JSON value.
class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  bool isNull() const { return kind == Kind::Null; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  /// Member `key` of an object, or a shared null value.
  const JsonValue &operator[](const std::string &key) const;
  /// `string` if this is a string, else `fallback`.
  std::string str(const std::string &fallback = "") const;
  /// `number` as an integer if this is a number, else `fallback`.
  long long integer(long long fallback = 0) const;
};

/// Parses `text`; on failure returns false and sets `error`.
bool parseJson(const std::string &text, JsonValue &result, std::string &error);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_JSON_H
