//===- Error.h - Errors of the runtime, without LLVM -----------*- C++ -*-===//
//
// The runtime links no LLVM (nabla-launch and libnabla_mgpu.so start on a
// machine that has only a GPU driver), so llvm::Error is not available; these
// two classes are its small equivalent: an Error is success or a message, an
// Expected<T> a value or an Error. Both are [[nodiscard]]. Tools turn them
// into exit statuses, Python into exceptions and libnabla_mgpu into its
// fatal-error convention; nothing below those layers prints or exits.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_ERROR_H
#define NABLA_RUNTIME_ERROR_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace nabla::runtime {

class [[nodiscard]] Error {
public:
  static Error success() { return Error(); }
  static Error failure(std::string message) {
    Error error;
    error.failed = true;
    error.text = std::move(message);
    return error;
  }

  /// True for a failure (as llvm::Error).
  explicit operator bool() const { return failed; }
  const std::string &message() const { return text; }

  /// The same failure with `context` in front of its message.
  Error withContext(const std::string &context) && {
    if (failed)
      text = context + ": " + text;
    return std::move(*this);
  }

private:
  Error() = default;
  bool failed = false;
  std::string text;
};

/// A failure; shorthand for Error::failure.
inline Error makeError(std::string message) {
  return Error::failure(std::move(message));
}

template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value(std::move(value)), error(Error::success()) {}
  Expected(Error failure) : error(std::move(failure)) {
    assert(error && "an Expected made from an Error holds a failure");
  }

  /// True when it holds a value.
  explicit operator bool() const { return value.has_value(); }
  T &operator*() { return *value; }
  const T &operator*() const { return *value; }
  T *operator->() { return &*value; }
  /// The failure (call only when it holds no value).
  Error takeError() { return std::move(error); }

private:
  std::optional<T> value;
  Error error;
};

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_ERROR_H
