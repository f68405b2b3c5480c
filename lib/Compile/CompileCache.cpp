//===- CompileCache.cpp - compileModule through the kernel cache ----------===//
//
// An entry holds the manifest (file "manifest.json", compact JSON) and one
// file per artifact, named "<module>\0<extension>" so that both parts come
// back exactly.
//
//===----------------------------------------------------------------------===//

#include "nabla/Compile/CompileCache.h"

#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Support/TargetOptions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

using namespace mlir;
using namespace nabla;

#ifndef NABLA_VERSION
#error "NABLA_VERSION must be defined by the build"
#endif

static constexpr llvm::StringLiteral kManifestFile = "manifest.json";

/// The file this function's code was loaded from: the tool's executable or
/// the Python extension.
static std::string getCompilerBinary() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&getCompilerBinary), &info) &&
      info.dli_fname)
    return info.dli_fname;
  return "";
}

/// A key fragment standing for `addFiles`'s files as they are now.
template <typename AddFiles> static std::string identityOf(AddFiles addFiles) {
  KernelCacheKey key;
  addFiles(key);
  return key.hex();
}

CompileEnvironment CompileEnvironment::current(CompileTarget target) {
  CompileEnvironment environment;
  environment.nablaVersion = NABLA_VERSION;
  environment.llvmVersion = LLVM_VERSION_STRING;
  // The binary does not change while the process runs: looked at once.
  static const std::string compiler = identityOf([](KernelCacheKey &key) {
    std::string binary = getCompilerBinary();
    std::string real = binary;
    llvm::SmallString<256> resolved;
    if (!binary.empty() && !llvm::sys::fs::real_path(binary, resolved))
      real = std::string(resolved);
    key.addFileIdentity("compiler", real);
  });
  environment.compilerIdentity = compiler;
  switch (target) {
  case CompileTarget::NVVM:
    environment.toolchainIdentity = identityOf([](KernelCacheKey &key) {
      std::string toolkit = findCUDAToolkit("");
      key.add("cuda-toolkit", toolkit);
      llvm::SmallString<128> libdevice(toolkit);
      llvm::sys::path::append(libdevice, "nvvm", "libdevice");
      if (!toolkit.empty())
        key.addDirectoryIdentity("libdevice", libdevice);
      std::string ptxas = findPtxas(toolkit);
      if (!ptxas.empty())
        key.addFileIdentity("ptxas", ptxas);
      std::string nvlink = ptxas.empty() ? "" : findNvlink(ptxas);
      if (!nvlink.empty())
        key.addFileIdentity("nvlink", nvlink);
    });
    break;
  case CompileTarget::ROCDL:
    environment.toolchainIdentity = identityOf([](KernelCacheKey &key) {
      std::string toolkit = getDefaultROCmToolkit();
      key.add("rocm-toolkit", toolkit);
      llvm::SmallString<128> bitcode(toolkit), linker(toolkit);
      llvm::sys::path::append(bitcode, "amdgcn", "bitcode");
      llvm::sys::path::append(linker, "llvm", "bin", "ld.lld");
      key.addDirectoryIdentity("device-libraries", bitcode);
      key.addFileIdentity("ld.lld", linker);
    });
    break;
  case CompileTarget::SPIRV:
  case CompileTarget::Metal:
    // SPIRV-Tools and SPIRV-Cross are part of the compiler's binary or
    // libraries it was built with.
    break;
  }
  return environment;
}

std::string nabla::getCompileCacheKey(ModuleOp module,
                                      const CompileOptions &options,
                                      const CompileEnvironment &environment) {
  KernelCacheKey key;
  key.add("format", "nabla-compile-1");
  key.add("nabla", environment.nablaVersion);
  key.add("llvm", environment.llvmVersion);
  key.add("compiler", environment.compilerIdentity);
  key.add("toolchain", environment.toolchainIdentity);

  key.add("target", stringifyCompileTarget(options.target));
  key.add("chip", options.chip);
  key.add("abi", options.abi);
  key.add("reloc-strategy", options.relocStrategy);
  key.add("opt-level", options.optLevel);
  key.add("workgroup-size", static_cast<int64_t>(options.workgroupSize.size()));
  for (int64_t extent : options.workgroupSize)
    key.add("workgroup-extent", extent);
  key.add("subgroup-size", static_cast<int64_t>(options.subgroupSize));
  key.add("emulate-float-atomics",
          static_cast<int64_t>(options.emulateFloatAtomics));
  key.add("dynamic-shared-memory", options.dynamicSharedMemory);
  key.add("loop-limit", options.loopLimit);
  key.add("only-kernel", options.onlyKernel);
  key.add("reloc-values", static_cast<int64_t>(options.relocValues.size()));
  for (const auto &[record, value] : options.relocValues) {
    key.add("reloc-key", record);
    key.add("reloc-dtype", value.first);
    key.add("reloc-bytes",
            llvm::StringRef(reinterpret_cast<const char *>(value.second.data()),
                            value.second.size()));
  }

  // Generic form: no custom printer is involved, and every attribute (also
  // discardable ones the pipelines read) and location is spelled out.
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags()
                        .printGenericOpForm()
                        .enableDebugInfo(/*enable=*/true, /*pretty=*/false)
                        .assumeVerified());
  key.add("module", text);
  return key.hex();
}

/// The entry's files for `result`.
static std::vector<CachedFile> encodeResult(const CompileResult &result) {
  std::vector<CachedFile> files;
  std::string manifest;
  llvm::raw_string_ostream os(manifest);
  os << llvm::json::Value(llvm::json::Object(result.manifest));
  files.push_back({kManifestFile.str(), std::move(manifest)});
  for (const Artifact &artifact : result.artifacts)
    files.push_back(
        {artifact.module + '\0' + artifact.extension, artifact.contents});
  return files;
}

/// The result an entry's files hold; std::nullopt when they do not describe
/// one (an entry of another format).
static std::optional<CompileResult>
decodeResult(std::vector<CachedFile> files) {
  CompileResult result;
  bool sawManifest = false;
  for (CachedFile &file : files) {
    if (file.name == kManifestFile) {
      llvm::Expected<llvm::json::Value> manifest =
          llvm::json::parse(file.contents);
      if (!manifest) {
        llvm::consumeError(manifest.takeError());
        return std::nullopt;
      }
      llvm::json::Object *object = manifest->getAsObject();
      if (!object)
        return std::nullopt;
      result.manifest = std::move(*object);
      sawManifest = true;
      continue;
    }
    size_t separator = file.name.find('\0');
    if (separator == std::string::npos)
      return std::nullopt;
    result.artifacts.push_back({file.name.substr(0, separator),
                                file.name.substr(separator + 1),
                                std::move(file.contents)});
  }
  if (!sawManifest)
    return std::nullopt;
  return result;
}

FailureOr<CompileResult>
nabla::compileModuleCached(ModuleOp module, const CompileOptions &options,
                           const KernelCache &cache) {
  if (!cache.isEnabled())
    return compileModule(module, options);
  std::string key = getCompileCacheKey(
      module, options, CompileEnvironment::current(options.target));
  if (std::optional<std::vector<CachedFile>> files = cache.lookup(key))
    if (std::optional<CompileResult> result = decodeResult(std::move(*files)))
      return std::move(*result);

  // Every diagnostic still reaches the caller's handler (failure() passes it
  // on); one that is not an error makes the result unfit to store.
  bool reported = false;
  FailureOr<CompileResult> result = failure();
  {
    ScopedDiagnosticHandler watcher(module.getContext(), [&](Diagnostic &) {
      reported = true;
      return failure();
    });
    result = compileModule(module, options);
  }
  if (succeeded(result) && !reported)
    cache.store(key, encodeResult(*result));
  return result;
}
