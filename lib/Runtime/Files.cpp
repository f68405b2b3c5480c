//===- Files.cpp - Read whole input files, checked ------------------------===//

#include "nabla/Runtime/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

bool nabla::runtime::readFile(const std::string &path, std::string &contents,
                              std::string &error) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    error = "'" + path + "' is not a regular file";
    return false;
  }
  if (uint64_t(info.st_size) > kMaxInputFileBytes) {
    error = "'" + path + "' is too large (" + std::to_string(info.st_size) +
            " bytes)";
    return false;
  }
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  contents.clear();
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    contents.append(chunk, n);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) {
    error = "cannot read '" + path + "'";
    return false;
  }
  return true;
}
