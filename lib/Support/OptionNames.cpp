//===- OptionNames.cpp - Unknown pass and pipeline options, worded --------===//

#include "nabla/Support/OptionNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

SmallVector<StringRef> nabla::getOptionKeys(StringRef options) {
  SmallVector<StringRef> keys;
  size_t start = 0;
  int depth = 0;
  char quote = 0;
  auto finish = [&](size_t end) {
    StringRef item = options.slice(start, end).trim();
    if (!item.empty())
      keys.push_back(item.take_until([](char c) { return c == '='; }).trim());
    start = end + 1;
  };
  for (size_t i = 0; i < options.size(); ++i) {
    char c = options[i];
    if (quote) {
      quote = c == quote ? 0 : quote;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '{' || c == '[' || c == '(')
      ++depth;
    else if ((c == '}' || c == ']' || c == ')') && depth > 0)
      --depth;
    else if (c == ' ' && depth == 0)
      finish(i);
  }
  finish(options.size());
  return keys;
}

std::string nabla::describeUnknownOption(StringRef owner, StringRef key,
                                         ArrayRef<std::string> valid) {
  std::string message;
  raw_string_ostream os(message);
  os << owner << " has no option '" << key << "'";
  // The closest name, if it is close: a case, '_' for '-', a letter or two.
  // '_' and '-' are the same for the comparison.
  std::string normalized = key.lower();
  std::replace(normalized.begin(), normalized.end(), '_', '-');
  StringRef best;
  unsigned bestDistance = std::max<size_t>(2, key.size() / 3) + 1;
  for (const std::string &name : valid) {
    unsigned distance = StringRef(name).edit_distance(normalized);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = name;
    }
  }
  if (!best.empty())
    os << "; did you mean '" << best << "'?";
  os << " (";
  if (valid.empty()) {
    os << "it takes no options)";
    return message;
  }
  os << "its options: ";
  interleaveComma(valid, os);
  os << ")";
  return message;
}

mlir::LogicalResult nabla::checkOptionKeys(
    StringRef owner, StringRef options, ArrayRef<std::string> valid,
    function_ref<mlir::LogicalResult(const Twine &)> errorHandler) {
  for (StringRef key : getOptionKeys(options))
    if (!is_contained(valid, key))
      return errorHandler(describeUnknownOption(owner, key, valid));
  return mlir::success();
}

mlir::LogicalResult nabla::initializePassOptions(
    mlir::Pass &pass, StringRef options,
    function_ref<mlir::LogicalResult(const Twine &)> errorHandler) {
  // The names, from the options as the pass prints them ("arg{a=1 b=2}"),
  // before parsing changes any.
  std::string printed;
  raw_string_ostream os(printed);
  pass.printAsTextualPipeline(os);
  StringRef body = StringRef(printed).drop_until([](char c) { return c == '{'; });
  std::vector<std::string> valid;
  if (body.consume_front("{") && body.consume_back("}"))
    for (StringRef key : getOptionKeys(body))
      valid.push_back(key.str());

  std::string error;
  mlir::LogicalResult result = pass.Pass::initializeOptions(
      options, [&](const Twine &message) {
        error = message.str();
        return mlir::failure();
      });
  if (succeeded(result))
    return result;
  StringRef text = StringRef(error).trim();
  const StringRef marker = "no such option ";
  size_t at = text.find(marker);
  if (at == StringRef::npos)
    return errorHandler(error);
  StringRef key = text.drop_front(at + marker.size()).trim();
  return errorHandler(
      describeUnknownOption(pass.getArgument(), key, valid));
}
