//===- Json.cpp - Parse JSON text with located errors ---------------------===//
//
// nlohmann's non-throwing parse only says *that* text is malformed; on failure
// the text is parsed a second time by a SAX handler that builds nothing and
// keeps the parser's message, which names the line, column and the token that
// went wrong. Neither pass throws: the runtime must report malformed input and
// exit 1, never terminate on an uncaught exception. Both passes are iterative
// in nlohmann, so deeply nested input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

using namespace nabla::runtime;
using json = nlohmann::json;

namespace {

/// Accepts every event and records the first parse error.
class ErrorLocator : public nlohmann::json_sax<json> {
public:
  std::string message;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }

  bool parse_error(std::size_t, const std::string &,
                   const json::exception &error) override {
    // what() is "[json.exception.parse_error.101] parse error at line ...";
    // the bracketed id means nothing to a user.
    std::string what = error.what();
    size_t start = what.find("] ");
    message = start == std::string::npos ? what : what.substr(start + 2);
    return false;
  }
};

} // namespace

bool nabla::runtime::parseJson(const std::string &text, json &result,
                               std::string &error) {
  result = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (!result.is_discarded())
    return true;
  ErrorLocator locator;
  json::sax_parse(text, &locator);
  error = locator.message.empty() ? "malformed JSON" : locator.message;
  result = nullptr;
  return false;
}
