//===- EntryArguments.cpp - Arguments of a host program's entry -----------===//

#include "EntryArguments.h"

#include "LaunchCommandLine.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"


using namespace mlir;
using namespace nabla;

namespace {

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// Parses scalar spec `spec` ("f32:1.5") for a parameter of type `type` into
/// `bytes` (the value's bytes, little-endian in an int64_t).
bool parseScalar(llvm::StringRef spec, Type type, int64_t &bytes,
                 std::string &error) {
  std::string want = typeString(type);
  if (spec.split(':').first != want) {
    error = "expects '" + want + ":VALUE', got '" + spec.str() + "'";
    return false;
  }
  bytes = 0;
  unsigned size = 0;
  return runtime::parseScalarValue(spec.str(),
                                   reinterpret_cast<unsigned char *>(&bytes),
                                   size, error);
}

} // namespace

bool EntryArguments::parse(func::FuncOp entry,
                           const std::vector<std::string> &specs,
                           std::string &error) {
  if (entry.getNumArguments() != specs.size()) {
    error = "entry '" + entry.getName().str() + "' takes " +
            std::to_string(entry.getNumArguments()) + " arguments, got " +
            std::to_string(specs.size()) + " --arg";
    return false;
  }
  for (auto [index, type] : llvm::enumerate(entry.getArgumentTypes())) {
    auto argument = std::make_unique<Argument>();
    std::string where = "--arg #" + std::to_string(index) + ": ";
    llvm::StringRef spec = specs[index];
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (!memref.getLayout().isIdentity()) {
        error = where + "the parameter is a memref with a layout; only "
                        "identity-layout buffers can be passed";
        return false;
      }
      if (!spec.ends_with(".npy")) {
        error = where + "expects a .npy file for " + typeString(type);
        return false;
      }
      if (!runtime::readNpy(spec.str(), argument->array, error)) {
        error = where + error;
        return false;
      }
      std::string element = typeString(memref.getElementType());
      if (!runtime::dtypeMatchesElementType(argument->array.dtype, element)) {
        error = where + "'" + spec.str() + "' holds " + argument->array.dtype +
                " elements, the parameter " + element;
        return false;
      }
      const std::vector<int64_t> &shape = argument->array.shape;
      bool matches = static_cast<int64_t>(shape.size()) == memref.getRank();
      for (int64_t d = 0; matches && d < memref.getRank(); ++d)
        matches = memref.isDynamicDim(d) || memref.getDimSize(d) == shape[d];
      if (!matches) {
        error = where + "the shape of '" + spec.str() +
                "' does not match " + typeString(type);
        return false;
      }
      argument->isBuffer = true;
      argument->sizes = shape;
      argument->strides.assign(shape.size(), 1);
      for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
        argument->strides[d] = argument->strides[d + 1] * shape[d + 1];
    } else if (!parseScalar(spec, type, argument->scalar, error)) {
      error = where + error;
      return false;
    }
    arguments.push_back(std::move(argument));
  }
  return true;
}

unsigned EntryArguments::loweredCount() const {
  unsigned count = 0;
  for (const auto &argument : arguments)
    count += argument->isBuffer ? 3 + 2 * argument->sizes.size() : 1;
  return count;
}

std::vector<void *> EntryArguments::pack(const WrapperMemory &memory) {
  std::vector<void *> packed;
  if (!stream)
    stream = memory.streamCreate();
  for (auto &argument : arguments) {
    if (!argument->isBuffer) {
      packed.push_back(&argument->scalar);
      continue;
    }
    size_t bytes = argument->array.data.size();
    argument->allocated =
        memory.alloc(std::max<size_t>(bytes, 16), stream, false);
    argument->aligned = argument->allocated;
    if (bytes)
      memory.copy(argument->allocated, argument->array.data.data(), bytes,
                  stream);
    packed.push_back(&argument->allocated);
    packed.push_back(&argument->aligned);
    packed.push_back(&argument->offset);
    for (int64_t &size : argument->sizes)
      packed.push_back(&size);
    for (int64_t &stride : argument->strides)
      packed.push_back(&stride);
  }
  memory.streamSynchronize(stream);
  return packed;
}

bool EntryArguments::finish(const WrapperMemory &memory,
                            const std::string &directory, std::string &error) {
  if (!stream)
    return true;
  for (auto &argument : arguments)
    if (argument->isBuffer && !argument->array.data.empty())
      memory.copy(argument->array.data.data(), argument->allocated,
                  argument->array.data.size(), stream);
  memory.streamSynchronize(stream);
  for (auto &argument : arguments)
    if (argument->isBuffer)
      memory.free(argument->allocated, stream);
  memory.streamSynchronize(stream);
  memory.streamDestroy(stream);
  stream = nullptr;
  if (directory.empty())
    return true;
  if (std::error_code code = llvm::sys::fs::create_directories(directory)) {
    error = "cannot create '" + directory + "': " + code.message();
    return false;
  }
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    if (!argument->isBuffer)
      continue;
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, "arg" + std::to_string(index) + ".npy");
    if (!runtime::writeNpy(std::string(path), argument->array, error))
      return false;
  }
  return true;
}
