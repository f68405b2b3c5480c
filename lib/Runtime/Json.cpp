//===- Json.cpp - A minimal JSON reader for the runtime -------------------===//
//
// Recursive descent over the JSON grammar (RFC 8259); \u escapes are decoded
// to UTF-8. Depth is bounded so that hostile input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Json.h"

#include <cstdlib>

using namespace nabla::runtime;

const JsonValue &JsonValue::operator[](const std::string &key) const {
  static const JsonValue null;
  if (kind != Kind::Object)
    return null;
  auto it = object.find(key);
  return it == object.end() ? null : it->second;
}

std::string JsonValue::str(const std::string &fallback) const {
  return kind == Kind::String ? string : fallback;
}

long long JsonValue::integer(long long fallback) const {
  return kind == Kind::Number ? static_cast<long long>(number) : fallback;
}

namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parse(JsonValue &value, std::string &error) {
    if (!parseValue(value, 0) || (skipSpace(), pos != text.size())) {
      error = message.empty() ? "trailing characters" : message;
      error += " at offset " + std::to_string(pos);
      return false;
    }
    return true;
  }

private:
  const std::string &text;
  size_t pos = 0;
  std::string message;

  bool fail(const char *why) {
    if (message.empty())
      message = why;
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\r' || text[pos] == '\t'))
      ++pos;
  }

  bool consume(const char *literal) {
    size_t n = std::char_traits<char>::length(literal);
    if (text.compare(pos, n, literal) != 0)
      return false;
    pos += n;
    return true;
  }

  bool parseValue(JsonValue &value, int depth) {
    if (depth > 256)
      return fail("nesting too deep");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end of input");
    char c = text[pos];
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = JsonValue::Kind::String;
      return parseString(value.string);
    }
    if (consume("true")) {
      value.kind = JsonValue::Kind::Bool;
      value.boolean = true;
      return true;
    }
    if (consume("false")) {
      value.kind = JsonValue::Kind::Bool;
      return true;
    }
    if (consume("null")) {
      value.kind = JsonValue::Kind::Null;
      return true;
    }
    return parseNumber(value);
  }

  bool parseNumber(JsonValue &value) {
    const char *begin = text.c_str() + pos;
    char *end = nullptr;
    double number = std::strtod(begin, &end);
    if (end == begin)
      return fail("expected a value");
    pos += end - begin;
    value.kind = JsonValue::Kind::Number;
    value.number = number;
    return true;
  }

  bool parseHex4(unsigned &code) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text[pos++];
      code <<= 4;
      if (h >= '0' && h <= '9')
        code |= h - '0';
      else if (h >= 'a' && h <= 'f')
        code |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        code |= h - 'A' + 10;
      else
        return fail("bad \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // opening quote
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        break;
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned code;
        if (!parseHex4(code))
          return false;
        if (code >= 0xD800 && code < 0xDC00 && consume("\\u")) {
          unsigned low;
          if (!parseHex4(low))
            return false;
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return fail("bad escape in string");
      }
    }
    return fail("unterminated string");
  }

  bool parseArray(JsonValue &value, int depth) {
    ++pos;
    value.kind = JsonValue::Kind::Array;
    skipSpace();
    if (consume("]"))
      return true;
    while (true) {
      value.array.emplace_back();
      if (!parseValue(value.array.back(), depth + 1))
        return false;
      skipSpace();
      if (consume("]"))
        return true;
      if (!consume(","))
        return fail("expected ',' or ']'");
    }
  }

  bool parseObject(JsonValue &value, int depth) {
    ++pos;
    value.kind = JsonValue::Kind::Object;
    skipSpace();
    if (consume("}"))
      return true;
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a member name");
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (!consume(":"))
        return fail("expected ':'");
      if (!parseValue(value.object[key], depth + 1))
        return false;
      skipSpace();
      if (consume("}"))
        return true;
      if (!consume(","))
        return fail("expected ',' or '}'");
    }
  }
};

} // namespace

bool nabla::runtime::parseJson(const std::string &text, JsonValue &result,
                               std::string &error) {
  result = JsonValue();
  return Parser(text).parse(result, error);
}
