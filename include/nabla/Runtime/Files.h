//===- Files.h - Read whole input files, checked ----------------*- C++ -*-===//
//
// Every file the runtime reads (.npy, manifest.json, .spv/.cubin/.hsaco)
// goes through readFile: it must be a regular file of bounded size, and a
// read error is a message, never a C++ exception (std::ifstream throws when
// asked to read a directory).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_FILES_H
#define NABLA_RUNTIME_FILES_H

#include <cstdint>
#include <string>

namespace nabla::runtime {

/// Largest input file the runtime reads (16 GiB).
constexpr uint64_t kMaxInputFileBytes = uint64_t(1) << 34;

/// Reads all of `path` into `contents`; false with `error` set if it is not
/// a readable regular file.
bool readFile(const std::string &path, std::string &contents,
              std::string &error);

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_FILES_H
