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
#include "mlir/IR/Verifier.h"
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

/// `text` without what MLIR's lexer skips at its start: blanks, NUL bytes
/// and `//` comments.
static StringRef skipTrivia(StringRef text) {
  while (true) {
    text = text.ltrim(StringRef(" \t\r\n\0", 5));
    if (!text.starts_with("//"))
      return text;
    text = text.drop_until([](char c) { return c == '\n'; });
  }
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
      continue;
    }
    // The keyword `array`, then (past what the lexer skips: blanks, NULs,
    // comments; found by fuzzing) `<` and `index`.
    if (c == 'a' && StringRef(p, end - p).starts_with("array") &&
        (p == begin || !isIdentifierChar(p[-1])) &&
        (p + 5 == end || !isIdentifierChar(p[5]))) {
      StringRef rest = skipTrivia(StringRef(p + 5, end - p - 5));
      if (rest.consume_front("<")) {
        rest = skipTrivia(rest);
        if (rest.starts_with("index") &&
            (rest.size() == 5 || !isIdentifierChar(rest[5])))
          return reportAt(sourceMgr, context, bufferId, rest.data(),
                          "a dense array cannot hold 'index' elements (use "
                          "i32 or i64)");
      }
      p += 4;
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

LogicalResult nabla::checkInherentAttributes(Operation *root) {
  // One op of each kind with nothing but its defaults, to learn which of its
  // attributes always have a value.
  llvm::DenseMap<OperationName, Operation *> defaults;
  bool failed = false;
  root->walk([&](Operation *op) {
    std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
    if (!name || op->getPropertiesStorageSize() == 0)
      return;
    Operation *&fresh = defaults[op->getName()];
    if (!fresh)
      fresh = Operation::create(UnknownLoc::get(op->getContext()),
                                op->getName(), {}, {}, NamedAttrList(),
                                OpaqueProperties(nullptr), {}, 0);
    for (StringAttr attrName : name->getAttributeNames()) {
      std::optional<Attribute> byDefault = fresh->getInherentAttr(attrName);
      std::optional<Attribute> given = op->getInherentAttr(attrName);
      if (byDefault && *byDefault && given && !*given) {
        op->emitOpError("attribute '")
            << attrName.getValue()
            << "' has a value of the wrong kind (expected one like "
            << *byDefault << ")";
        failed = true;
      }
    }
  });
  for (auto &entry : defaults)
    entry.second->destroy();
  return failure(failed);
}

OwningOpRef<ModuleOp> nabla::parseCheckedModule(llvm::SourceMgr &sourceMgr,
                                                MLIRContext *context) {
  if (failed(checkSource(sourceMgr, context, sourceMgr.getMainFileID())))
    return {};
  ParserConfig config(context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module || failed(checkInherentAttributes(*module)) ||
      failed(verify(*module)))
    return {};
  return module;
}

LogicalResult nabla::checkParsedMLIRSource(llvm::SourceMgr &sourceMgr,
                                           unsigned bufferId,
                                           const DialectRegistry &registry) {
  MLIRContext context(registry);
  context.allowUnregisteredDialects();
  context.printOpOnDiagnostic(false);
  StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  StringRef name = sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
  // The whole file, else each `// -----` chunk (-split-input-file), padded
  // with newlines to keep its line numbers; input that does not parse is
  // left to the tool to report.
  bool found = false;
  SmallVector<StringRef> chunks{text};
  if (text.contains("// -----"))
    text.split(chunks, "// -----");
  for (StringRef chunk : chunks) {
    unsigned line = sourceMgr
                        .getLineAndColumn(
                            llvm::SMLoc::getFromPointer(chunk.data()), bufferId)
                        .first;
    std::string padded = std::string(line - 1, '\n') + chunk.str();
    Block block;
    {
      ScopedDiagnosticHandler quiet(&context,
                                    [](Diagnostic &) { return success(); });
      ParserConfig config(&context, /*verifyAfterParse=*/false);
      if (failed(parseSourceString(padded, &block, config, name)))
        continue;
    }
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    for (Operation &op : block)
      if (failed(checkInherentAttributes(&op)))
        found = true;
  }
  return failure(found);
}
