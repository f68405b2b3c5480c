//===- SourceChecks.cpp - Reject input upstream's parser crashes on -------===//
//
// A single pass over the raw text that understands just enough of MLIR's
// lexical structure (comments, string literals, brackets) to measure nesting
// and to find `array<index ...>`, which MLIR 22's parser crashes on (it asks
// `index` for a bit width). Everything else is left to the parser.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/SourceChecks.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace nabla;

/// True for characters of a bare identifier or keyword (MLIR's lexer), so
/// that `!llvm.array<` is not mistaken for the builtin `array<`, while
/// `array<index#x` still is (the lexer ends `index` at '#': found by fuzzing).
static bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
}

/// Reports `message` at `pos` in `sourceMgr`'s diagnostics: through the
/// context's handler when a context is attached, else on stderr.
static LogicalResult reportAt(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                              unsigned bufferId, const char *pos,
                              const llvm::Twine &message) {
  llvm::SMLoc loc = llvm::SMLoc::getFromPointer(pos);
  if (context) {
    auto [line, column] = sourceMgr.getLineAndColumn(loc, bufferId);
    StringRef file = sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
    return emitError(FileLineColLoc::get(context, file, line, column), message);
  }
  sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
  return failure();
}

static LogicalResult checkSource(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context, unsigned bufferId) {
  StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  const char *begin = text.begin(), *end = text.end();
  unsigned depth = 0;
  for (const char *p = begin; p < end; ++p) {
    char c = *p;
    if (c == '/' && p + 1 < end && p[1] == '/') {
      while (p < end && *p != '\n')
        ++p;
      continue;
    }
    if (c == '"') {
      for (++p; p < end && *p != '"' && *p != '\n'; ++p)
        if (*p == '\\')
          ++p;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxSourceNesting)
        return reportAt(sourceMgr, context, bufferId, p,
                        "brackets nest deeper than " +
                            llvm::Twine(kMaxSourceNesting) +
                            " levels; Nabla does not parse such input");
      if (c == '<' && p >= begin + 5 && StringRef(p - 5, 5) == "array" &&
          (p == begin + 5 || !isIdentifierChar(p[-6]))) {
        // What the lexer skips before the element type: blanks, comments.
        StringRef rest = StringRef(p + 1, end - p - 1).ltrim(" \t\r\n");
        while (rest.starts_with("//"))
          rest = rest.drop_until([](char c) { return c == '\n'; })
                     .ltrim(" \t\r\n");
        if (rest.starts_with("index") &&
            (rest.size() == 5 || !isIdentifierChar(rest[5])))
          return reportAt(sourceMgr, context, bufferId, rest.data(),
                          "a dense array cannot hold 'index' elements (use "
                          "i32 or i64)");
      }
      continue;
    }
    if (c == ')' || c == ']' || c == '}' ||
        (c == '>' && (p == begin || p[-1] != '-') &&
         (p + 1 == end || p[1] != '='))) {
      if (depth)
        --depth;
    }
  }
  return success();
}

LogicalResult nabla::checkMLIRSource(llvm::SourceMgr &sourceMgr,
                                     unsigned bufferId) {
  return checkSource(sourceMgr, /*context=*/nullptr, bufferId);
}

OwningOpRef<ModuleOp> nabla::parseCheckedModule(llvm::SourceMgr &sourceMgr,
                                                MLIRContext *context) {
  if (failed(checkSource(sourceMgr, context, sourceMgr.getMainFileID())))
    return {};
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}
