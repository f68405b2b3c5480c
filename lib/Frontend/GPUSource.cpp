//===- GPUSource.cpp - CUDA and HIP source compiled to device LLVM IR -----===//
//
// Runs clang as a child process (Nabla links no clang libraries; the child
// and the temporary files go with an interrupted tool: ChildProcess.h) on a
// source file and reads back the LLVM IR it wrote. The command line is the one
// the frontend tests use (test/Integration/frontend_helpers.py), plus line
// tables
// (-gline-tables-only: the raise and the AD report the source's line, and no
// variable records are emitted for the raise to skip), the parameters' names
// (-fno-discard-value-names: Python's argument errors quote them), no
// warning about a CUDA toolkit newer than clang knows, and Nabla's
// share/nabla/include for enzyme.h.
//
//===----------------------------------------------------------------------===//

#include "nabla/Frontend/GPUSource.h"

#include "nabla/Conversion/LLVMToNabla/ImportLLVMIR.h"
#include "nabla/Support/ChildProcess.h"
#include "nabla/Support/KernelCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace nabla;

char ClangDiagnosticsError::ID = 0;

std::optional<GPUSourceLanguage>
nabla::getGPUSourceLanguage(llvm::StringRef path) {
  llvm::StringRef extension = llvm::sys::path::extension(path);
  if (extension == ".cu")
    return GPUSourceLanguage::CUDA;
  if (extension == ".hip")
    return GPUSourceLanguage::HIP;
  return std::nullopt;
}

llvm::Expected<std::string> nabla::findClang() {
  if (const char *overridden = std::getenv("NABLA_CLANG")) {
    if (llvm::sys::fs::can_execute(overridden))
      return std::string(overridden);
    return llvm::createStringError(
        "NABLA_CLANG is set to '%s', which is not an executable", overridden);
  }
  // The clang of the LLVM Nabla links: its IR is what this LLVM reads.
  llvm::SmallString<128> bundled(NABLA_LLVM_TOOLS_DIR);
  llvm::sys::path::append(bundled, "clang");
  if (llvm::sys::fs::can_execute(bundled))
    return std::string(bundled);
  if (llvm::ErrorOr<std::string> onPath =
          llvm::sys::findProgramByName("clang-22"))
    return *onPath;
  return llvm::createStringError(
      "clang-22 is needed to compile CUDA and HIP sources, and neither %s nor "
      "clang-22 on PATH was found (install clang-22, or set NABLA_CLANG to a "
      "clang of LLVM 22)",
      bundled.c_str());
}

std::optional<std::string> nabla::findFrontendHeaders(llvm::StringRef from) {
  llvm::SmallString<256> directory(from);
  llvm::sys::fs::make_absolute(directory);
  // The tools sit in <root>/bin, the Python package in <root>/python/nabla
  // (build tree) or <root>/lib/python3.X/dist-packages/nabla (installed).
  for (int depth = 0; depth < 5 && !directory.empty(); ++depth) {
    llvm::SmallString<256> candidate(directory);
    llvm::sys::path::append(candidate, "share", "nabla", "include");
    llvm::SmallString<256> header(candidate);
    llvm::sys::path::append(header, "enzyme.h");
    if (llvm::sys::fs::exists(header))
      return std::string(candidate);
    directory = llvm::sys::path::parent_path(directory);
  }
  return std::nullopt;
}

/// The CUDA toolkit clang reads headers from: $CUDA_PATH, else
/// /usr/local/cuda when present (else clang's own search, whose error
/// explains what is missing).
static std::optional<std::string> findCUDAToolkit() {
  if (const char *path = std::getenv("CUDA_PATH"))
    return std::string(path);
  if (llvm::sys::fs::is_directory("/usr/local/cuda/include"))
    return std::string("/usr/local/cuda");
  return std::nullopt;
}

/// ROCm for HIP's headers: $ROCM_PATH, else /opt/rocm when it has them.
static std::optional<std::string> findROCm() {
  if (const char *path = std::getenv("ROCM_PATH"))
    return std::string(path);
  if (llvm::sys::fs::exists("/opt/rocm/include/hip/hip_runtime.h"))
    return std::string("/opt/rocm");
  return std::nullopt;
}

std::vector<std::string>
nabla::getGPUSourceCommand(llvm::StringRef clang, llvm::StringRef path,
                           llvm::StringRef output,
                           const GPUSourceOptions &options) {
  std::vector<std::string> command = {clang.str()};
  if (options.language == GPUSourceLanguage::CUDA) {
    command.insert(
        command.end(),
        {"-x", "cuda", "--cuda-device-only",
         "--cuda-gpu-arch=" + (options.arch.empty() ? "sm_80" : options.arch),
         "-nocudalib", "-Wno-unknown-cuda-version"});
    if (std::optional<std::string> toolkit = findCUDAToolkit()) {
      command.push_back("--cuda-path=" + *toolkit);
      // CUDA 13 keeps libcu++ (cuda/std/..., which cooperative groups
      // includes) under include/cccl.
      llvm::SmallString<128> cccl(*toolkit);
      llvm::sys::path::append(cccl, "include", "cccl");
      if (llvm::sys::fs::is_directory(cccl))
        command.insert(command.end(), {"-isystem", std::string(cccl)});
    }
  } else {
    command.insert(
        command.end(),
        {"-x", "hip", "--cuda-device-only",
         "--offload-arch=" + (options.arch.empty() ? "gfx90a" : options.arch),
         "-nogpulib"});
    // Without ROCm the source defines the HIP names it uses itself.
    if (std::optional<std::string> rocm = findROCm())
      command.push_back("--rocm-path=" + *rocm);
    else
      command.push_back("-nogpuinc");
  }
  command.insert(command.end(),
                 {"-O2", "-S", "-emit-llvm", "-gline-tables-only",
                  "-fno-discard-value-names"});
  if (std::optional<std::string> headers =
          findFrontendHeaders(options.searchFrom))
    command.insert(command.end(), {"-isystem", *headers});
  command.insert(command.end(), options.extraArgs.begin(),
                 options.extraArgs.end());
  command.insert(command.end(), {path.str(), "-o", output.str()});
  return command;
}

/// Reads a whole file; an empty string when it cannot be read.
static std::string readFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// The files a make-style dependency list (clang's -MD output) names after
/// its target: whitespace separates them, a backslash before a newline
/// continues the line, before a space or `#` escapes it; `$$` is `$`.
static std::vector<std::string> parseDependencies(llvm::StringRef text) {
  std::vector<std::string> files;
  std::string current;
  bool pastTarget = false;
  auto flush = [&] {
    if (current.empty())
      return;
    if (pastTarget)
      files.push_back(current);
    else if (current.back() == ':')
      pastTarget = true;
    current.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '\\' && (next == '\n' || next == '\r')) {
      flush();
      ++i;
      continue;
    }
    if (c == '\\' && (next == ' ' || next == '#')) {
      current += next;
      ++i;
      continue;
    }
    if (c == '$' && next == '$') {
      current += '$';
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      continue;
    }
    current += c;
  }
  flush();
  return files;
}

namespace {
/// The kernel cache's view of one source compile: the first entry lists the
/// files the source included, the second (keyed also by their identities)
/// holds what clang produced.
struct SourceCache {
  std::optional<KernelCache> cache;
  KernelCacheKey key;
  std::string commandKey;

  /// The entry of the outputs, given the included files as they are now.
  std::string outputsKey(llvm::ArrayRef<std::string> dependencies) {
    KernelCacheKey identities = key;
    for (const std::string &file : dependencies)
      identities.addFileIdentity("include", file);
    return identities.hex();
  }
};
} // namespace

/// Compiles the file `path`; `name` stands for it in the cache key (the
/// user's name of a source compiled from text, whose file is temporary).
static llvm::Expected<GPUSourceResult>
compileSourceFile(llvm::StringRef path, llvm::StringRef name,
                  const GPUSourceOptions &options) {
  llvm::Expected<std::string> clang = findClang();
  if (!clang)
    return clang.takeError();
  TemporaryFile output, diagnostics, dependencies;
  if (std::error_code error = output.create("nabla-source", "ll"))
    return llvm::createStringError(error, "cannot create a temporary file");
  if (std::error_code error = diagnostics.create("nabla-source", "txt"))
    return llvm::createStringError(error, "cannot create a temporary file");

  std::vector<std::string> command =
      getGPUSourceCommand(*clang, path, output.path(), options);

  // The cache: clang's identity, the command (its temporary paths as
  // placeholders), where relative paths start, the source.
  SourceCache cached;
  if (options.useCache) {
    llvm::Expected<KernelCacheConfig> config =
        KernelCacheConfig::fromEnvironment();
    if (!config)
      llvm::consumeError(config.takeError());
    else if (!config->directory.empty())
      cached.cache.emplace(std::move(*config));
  }
  if (cached.cache) {
    cached.key.add("entry", "gpu-source-1");
    cached.key.addFileIdentity("clang", *clang);
    for (const std::string &argument : command)
      cached.key.add("argument", argument == path            ? "<source>"
                                 : argument == output.path() ? "<output>"
                                                             : argument);
    llvm::SmallString<256> directory;
    if (!llvm::sys::fs::current_path(directory))
      cached.key.add("directory", directory);
    cached.key.add("name", name);
    cached.key.add("source", readFile(path));
    cached.commandKey = cached.key.hex();
    if (std::optional<std::vector<CachedFile>> list =
            cached.cache->lookup(cached.commandKey)) {
      std::vector<std::string> files;
      if (list->size() == 1)
        files = parseDependencies(list->front().contents);
      if (std::optional<std::vector<CachedFile>> outputs =
              cached.cache->lookup(cached.outputsKey(files));
          outputs && outputs->size() == 2 && outputs->front().name == "ll" &&
          !outputs->front().contents.empty())
        return GPUSourceResult{std::move(outputs->front().contents),
                               std::move(outputs->back().contents)};
    }
    if (std::error_code error = dependencies.create("nabla-source", "d"))
      return llvm::createStringError(error, "cannot create a temporary file");
    // Before `path -o output`: the files clang includes.
    command.insert(command.end() - 3,
                   {"-MD", "-MF", std::string(dependencies.path())});
  }

  llvm::SmallVector<llvm::StringRef> arguments(command.begin(), command.end());
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(""), diagnostics.path()};
  std::string failure;
  int status = runChildProcess(*clang, arguments, redirects, failure);
  std::string printed = readFile(diagnostics.path());
  if (status < 0)
    return llvm::createStringError("cannot run %s: %s", clang->c_str(),
                                   failure.c_str());
  if (status != 0) {
    if (printed.empty())
      printed = *clang + " exited with status " + std::to_string(status) +
                " on '" + path.str() + "'\n";
    return llvm::make_error<ClangDiagnosticsError>(std::move(printed));
  }
  GPUSourceResult result;
  result.llvmIR = readFile(output.path());
  result.warnings = std::move(printed);
  if (result.llvmIR.empty())
    return llvm::createStringError("%s wrote no LLVM IR for '%s'",
                                   clang->c_str(), path.str().c_str());
  if (cached.cache) {
    // The included files, the source itself left out (its contents are in
    // the key; a temporary one is gone by the next compile).
    std::vector<std::string> files =
        parseDependencies(readFile(dependencies.path()));
    llvm::erase(files, path.str());
    std::string list;
    for (const std::string &file : files) {
      for (char c : file) {
        if (c == ' ' || c == '#' || c == '\\')
          list += '\\';
        list += c == '$' ? std::string("$$") : std::string(1, c);
      }
      list += " \\\n";
    }
    if (!files.empty())
      list.insert(0, "source: ");
    // Outputs first: a list whose outputs are missing is a miss anyway.
    cached.cache->store(cached.outputsKey(files),
                        {{"ll", result.llvmIR}, {"warnings", result.warnings}});
    cached.cache->store(cached.commandKey, {{"includes", list}});
  }
  return result;
}

llvm::Expected<GPUSourceResult>
nabla::compileGPUSource(llvm::StringRef path, const GPUSourceOptions &options) {
  return compileSourceFile(path, path, options);
}

llvm::Expected<GPUSourceResult>
nabla::compileGPUSourceText(llvm::StringRef text, llvm::StringRef fileName,
                            const GPUSourceOptions &options) {
  llvm::StringRef extension =
      options.language == GPUSourceLanguage::CUDA ? "cu" : "hip";
  TemporaryFile source;
  int fd = -1;
  if (std::error_code error = source.create("nabla-source", extension, &fd))
    return llvm::createStringError(error, "cannot create a temporary file");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    // The name in diagnostics and debug locations; quotes and backslashes
    // escaped as a C string literal.
    os << "#line 1 \"";
    for (char c : fileName) {
      if (c == '"' || c == '\\')
        os << '\\';
      os << c;
    }
    os << "\"\n" << text;
    if (!text.ends_with("\n"))
      os << "\n";
  }
  return compileSourceFile(source.path(), fileName, options);
}

mlir::OwningOpRef<mlir::ModuleOp>
nabla::importGPUSource(llvm::StringRef path, llvm::SourceMgr &sourceMgr,
                       mlir::MLIRContext *context,
                       const GPUSourceOptions &options) {
  llvm::Expected<GPUSourceResult> compiled = compileGPUSource(path, options);
  if (!compiled) {
    llvm::handleAllErrors(
        compiled.takeError(),
        [](const ClangDiagnosticsError &error) {
          llvm::errs() << error.diagnostics;
        },
        [](const llvm::ErrorInfoBase &error) {
          llvm::errs() << "error: " << error.message() << "\n";
        });
    return nullptr;
  }
  llvm::errs() << compiled->warnings;
  // Instructions without a debug location (there are few with line tables)
  // get the line of this buffer, named after the source.
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                   compiled->llvmIR, path.str() + ".ll"),
                               llvm::SMLoc());
  return importLLVMIR(sourceMgr, context);
}
