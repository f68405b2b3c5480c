//===- nabla-run.cpp - Compile and launch one kernel ----------------------===//
//
// nabla-run FILE.mlir --kernel=NAME [--target=vulkan|cuda|hip]
//           --grid=X[,Y,Z] --block=X[,Y,Z] [--arg=SPEC]... [--reloc=KEY=FILE]
//           [--abi=v1|v2] [--emulate-float-atomics] [--out=DIR]
// Compiles FILE for the device (SPIR-V with the launch's block size, or the
// device's sm_/gfx chip), launches once with the launcher code nabla-launch
// uses, and writes DIR/arg<k>.npy for every buffer parameter. Relocated
// objects: under abi v2 (default) the kernels are compiled to receive them at
// load time (table bindings on Vulkan, patched globals on CUDA/HIP) and
// --reloc supplies them to the launch; under v1 --reloc gives constant
// records their contents at compile time and they are materialized.
// FILE may also be a frontend's LLVM IR (.ll, .bc) or a CUDA/HIP source
// (.cu, .hip), which clang-22 compiles first (nabla/Frontend/GPUSource.h;
// --clang-option=ARG passes more arguments); --kernel= then takes the IR's
// name or the source's (`mul_kernel`, demangled).
// Exit status: 0 success, 1 compile/runtime error, 2 usage error.
//
//===----------------------------------------------------------------------===//

#include "HostProgram.h"

#include "LaunchCommandLine.h"
#include "nabla/Compile/Compile.h"
#include "nabla/Compile/CompileCache.h"
#include "nabla/Conversion/LLVMToNabla/ImportLLVMIR.h"
#include "nabla/Conversion/Passes.h"
#include "nabla/Dialect/Reloc/IR/RelocOps.h"
#include "nabla/Frontend/GPUSource.h"
#include "nabla/Frontend/KernelNames.h"
#include "nabla/InitAll.h"
#include "nabla/Runtime/Npy.h"
#include "nabla/Support/ToolGuard.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>

using namespace nabla::runtime;

/// abi v1: gives each record named by --reloc=KEY=FILE.npy its contents, to
/// be materialized by the pipeline (constant host objects whose contents the
/// compilation knows). Returns false after printing an error.
static bool setRecordContents(mlir::ModuleOp module,
                              const std::vector<std::string> &relocs) {
  using nabla::reloc::GlobalOp;
  llvm::SmallVector<GlobalOp> records;
  module.walk([&](GlobalOp record) { records.push_back(record); });
  for (const std::string &spec : relocs) {
    std::string key = spec.substr(0, spec.find('='));
    std::string path = spec.substr(spec.find('=') + 1);
    GlobalOp record;
    for (GlobalOp candidate : records)
      if (candidate.getKey() == key)
        record = candidate;
    if (!record) {
      std::cerr << "error: --reloc names '" << key
                << "', which is not a relocation record of these kernels\n";
      return false;
    }
    auto type = llvm::dyn_cast<mlir::MemRefType>(record.getGlobalType());
    if (!type || !type.hasStaticShape() || !record.getConstant()) {
      std::cerr << "error: relocation record '" << key
                << "' must be a constant, statically shaped memref for "
                   "--reloc under --abi=v1 (writable or pointer records are "
                   "relocated at load time: use --abi=v2)\n";
      return false;
    }
    NpyArray array;
    std::string error;
    if (!readNpy(path, array, error)) {
      std::cerr << "error: " << error << "\n";
      return false;
    }
    std::string element;
    llvm::raw_string_ostream(element) << type.getElementType();
    if (!dtypeMatchesElementType(array.dtype, element) ||
        array.shape != std::vector<int64_t>(type.getShape().begin(),
                                            type.getShape().end())) {
      std::cerr << "error: '" << path << "' does not match relocation record '"
                << key << "' of type " << element << " with "
                << type.getNumElements() << " elements in its shape\n";
      return false;
    }
    auto tensor =
        mlir::RankedTensorType::get(type.getShape(), type.getElementType());
    record.setValueAttr(mlir::DenseElementsAttr::getFromRawBuffer(
        tensor,
        llvm::ArrayRef<char>(reinterpret_cast<const char *>(array.data.data()),
                             array.data.size())));
  }
  return true;
}

static const char *kUsage =
    "usage: nabla-run FILE --kernel=NAME --grid=X[,Y,Z] "
    "--block=X[,Y,Z] [--arg=SPEC]... [options]\n"
    "       nabla-run FILE.mlir --entry=NAME [--arg=SPEC... | --arg-sets=FILE] "
    "[--out=DIR]\n"
    "                 [--target=vulkan|cuda|hip] [--device=N] "
    "[--emulate-float-atomics]\n";

static void printHelp() {
  std::cout
      << "nabla-run: compile and launch one kernel\n\n"
      << kUsage
      << "\nCompiles FILE for the device (SPIR-V with the launch's block "
         "size, or the device's\nsm_/gfx chip): only kernel NAME and what it "
         "needs, so errors elsewhere in FILE do not\nmatter. Launches it "
         "once (--repeat: N times, each from the same inputs; --time: "
         "print\nthe kernel's device-measured time), then writes every "
         "buffer parameter k to arg<k>.npy\nin the --out directory.\n"
         "\nOPTIONS:\n"
      << launchFlagsHelp()
      << "  --clang-option=ARG     for a .cu/.hip FILE: one more clang "
         "argument (-O1, -DN=4, -Idir), after Nabla's\n"
         "  --abi=v1|v2            relocation convention (default v2; v1 "
         "materializes constant --reloc records)\n"
         "  --emulate-float-atomics  SPIR-V: float atomic adds as "
         "compare-exchange loops\n"
         "  --no-cache             compile even when the kernel cache holds "
         "the kernel ($NABLA_CACHE_DIR,\n"
         "                         default ~/.cache/nabla; NABLA_NO_CACHE=1 "
         "does the same)\n"
         "  --help                 print this help and exit\n"
         "  --version              print the version and exit\n"
         "\nFILE is MLIR, a frontend's LLVM IR (.ll, .bc) or CUDA/HIP source "
         "(.cu, .hip, compiled\nby clang-22 with Nabla's enzyme.h on the "
         "include path); for the last two --kernel\ntakes the IR's name or "
         "the source's (e.g. mul_kernel for _Z10mul_kernelPfi).\n"
         "\nWith --entry, FILE is a host program: host code that allocates, "
         "copies and launches\nkernels (gpu.launch_func, gpu.launch). "
         "nabla-run compiles its kernels for the device,\nlowers the host "
         "code against libnabla_mgpu and runs function NAME (no result or an "
         "i32, the exit\nstatus) with MLIR's ExecutionEngine: its arguments "
         "are the --arg specs (.npy buffers copied\nto device memory and "
         "back into --out=DIR/arg<k>.npy, scalars f32:V ...) or, one run "
         "per\nline, --arg-sets=FILE (outputs in DIR/<line>/); the kernel "
         "flags do not apply\n(docs/HostPrograms.md, docs/HostAD.md).\n"
         "\nEXIT STATUS: 0 success, 1 compile or runtime error, 2 usage "
         "error.\n"
         "\nEXAMPLE:\n"
         "  nabla-run examples/mul_kernel.mlir --kernel=mul_kernel --grid=1 "
         "--block=64 --arg=a.npy --arg=index:16 --out=result\n"
         "  nabla-run examples/mul_kernel.mlir --kernel=mul_kernel --grid=1 "
         "--block=64 --arg=a.npy --arg=index:16 --repeat=20 --time=json\n"
         "  nabla-run seed.cu --kernel=grad_mul_kernel --grid=1 --block=64 "
         "--arg=a.npy --arg=da.npy --arg=i32:16\n"
         "  nabla-run program.mlir --entry=main\n"
         "  nabla-run program.mlir --entry=grad --arg=x.npy --arg=dx.npy "
         "--arg=index:8 --out=result\n";
}

/// Reads FILE: MLIR, LLVM IR, or a CUDA/HIP source compiled by clang with
/// `clangOptions` (Nabla's enzyme.h found from this executable's folder).
/// Null after printing an error.
static mlir::OwningOpRef<mlir::ModuleOp>
readInput(const std::string &path, const std::vector<std::string> &clangOptions,
          bool useCache, const char *argv0, llvm::SourceMgr &sourceMgr,
          mlir::MLIRContext &context, bool &isLLVMIR) {
  if (std::optional<nabla::GPUSourceLanguage> language =
          nabla::getGPUSourceLanguage(path)) {
    if (!llvm::sys::fs::exists(path)) {
      std::cerr << "error: cannot open '" << path << "'\n";
      return nullptr;
    }
    nabla::GPUSourceOptions source;
    source.language = *language;
    source.extraArgs = clangOptions;
    source.useCache = useCache;
    source.searchFrom = llvm::sys::path::parent_path(
        llvm::sys::fs::getMainExecutable(argv0, (void *)&readInput));
    isLLVMIR = true;
    return nabla::importGPUSource(path, sourceMgr, &context, source);
  }
  if (!clangOptions.empty()) {
    std::cerr << "error: --clang-option applies to CUDA and HIP sources "
                 "(.cu, .hip) only\n";
    return nullptr;
  }
  std::string error;
  auto buffer = mlir::openInputFile(path, &error);
  if (!buffer) {
    std::cerr << "error: " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  return nabla::parseInputModule(sourceMgr, &context, &isLLVMIR);
}

static int usage(const std::string &message) {
  std::cerr << "nabla-run: " << message << "\n" << kUsage << launchFlagsHelp();
  return 2;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  nabla::installToolGuard("nabla-run");
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      printHelp();
      return 0;
    }
    if (arg == "--version") {
      std::cout << "nabla-run (Nabla) " NABLA_VERSION
                   "\n  LLVM/MLIR " LLVM_VERSION_STRING "\n";
      return 0;
    }
  }
  // A whole program (host code and kernels) instead of one kernel.
  if (nabla::isHostProgramRun(argc, argv))
    return nabla::runHostProgram(argc, argv);
  LaunchOptions options;
  std::vector<std::string> positional, unknown;
  std::string error;
  if (!parseLaunchFlags(argc, argv, options, positional, unknown, error))
    return usage(error);
  std::string abi = "v2";
  bool emulateFloatAtomics = false;
  bool useCache = true;
  std::vector<std::string> clangOptions;
  for (const std::string &flag : unknown) {
    if (flag.rfind("--clang-option=", 0) == 0) {
      clangOptions.push_back(flag.substr(15));
      continue;
    }
    if (flag == "--emulate-float-atomics") {
      emulateFloatAtomics = true;
      continue;
    }
    if (flag == "--no-cache") {
      useCache = false;
      continue;
    }
    if (flag.rfind("--abi=", 0) == 0 &&
        (flag.substr(6) == "v1" || flag.substr(6) == "v2")) {
      abi = flag.substr(6);
      continue;
    }
    if (flag.rfind("--abi=", 0) == 0)
      return usage("malformed " + flag + " (expected v1 or v2)");
    return usage("unknown option '" + flag + "'");
  }
  if (positional.size() != 1)
    return usage("expected one input file (.mlir, .ll, .bc, .cu or .hip)");
  if (options.kernel.empty() || !options.hasGrid || !options.hasBlock)
    return usage("--kernel, --grid and --block are required");

  llvm::Expected<nabla::KernelCacheConfig> cacheConfig =
      nabla::KernelCacheConfig::fromEnvironment(useCache);
  if (!cacheConfig)
    return usage(llvm::toString(cacheConfig.takeError()));

  std::string target = resolveTarget(options);
  std::unique_ptr<Device> device = openDevice(target, options.device, error);
  if (!device) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }

  mlir::DialectRegistry registry;
  nabla::registerUpstreamDialects(registry);
  nabla::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  bool isLLVMIR = false;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      readInput(positional.front(), clangOptions, useCache, argv[0], sourceMgr,
                context, isLLVMIR);
  if (!module)
    return 1;
  if (isLLVMIR) {
    // The kernel as the source names it (`mul_kernel`) or as the IR does.
    llvm::Expected<std::string> kernel = nabla::resolveKernelName(
        nabla::getLLVMKernelNames(*module), options.kernel);
    if (!kernel) {
      std::cerr << "error: " << llvm::toString(kernel.takeError()) << "\n";
      return 1;
    }
    options.kernel = *kernel;
    // A frontend's kernels: the launched one and what it reaches, raised
    // before it is looked up (errors elsewhere in the file do not matter).
    mlir::PassManager raise(&context);
    nabla::RaiseLLVMOptions raiseOptions;
    raiseOptions.kernel = options.kernel;
    raise.addPass(nabla::createRaiseLLVM(raiseOptions));
    if (failed(raise.run(*module)))
      return 1;
  }
  if (module->getOps<mlir::gpu::GPUModuleOp>().empty()) {
    std::cerr << "error: '" << positional.front()
              << "' has no gpu.module to compile (for precompiled kernels "
                 "use nabla-launch on a nabla-compile directory)\n";
    return 1;
  }

  nabla::CompileOptions compile;
  compile.abi = abi;
  // Only the launched kernel and what it needs: an error elsewhere in the
  // file does not block it (nabla-compile still compiles everything).
  compile.onlyKernel = options.kernel;
  if (abi == "v1") {
    if (!setRecordContents(*module, options.relocs))
      return 1;
    // The relocations become part of the kernels.
    options.relocs.clear();
  }
  if (target == "vulkan") {
    compile.target = nabla::CompileTarget::SPIRV;
    compile.workgroupSize = {options.block.x, options.block.y, options.block.z};
    compile.subgroupSize = device->info().subgroupSize;
    compile.loopLimit = nabla::runtime::loopIterationLimit(device->info().name);
    compile.emulateFloatAtomics = emulateFloatAtomics;
    // SPIR-V compiles the launch's dynamic shared memory in.
    compile.dynamicSharedMemory = options.dynamicSharedMemory;
  } else {
    compile.target = target == "cuda" ? nabla::CompileTarget::NVVM
                                      : nabla::CompileTarget::ROCDL;
    compile.chip = device->info().chip;
  }
  mlir::FailureOr<nabla::CompileResult> result = nabla::compileModuleCached(
      *module, compile, nabla::KernelCache(std::move(*cacheConfig)));
  if (mlir::failed(result))
    return 1;

  std::string manifestText;
  llvm::raw_string_ostream os(manifestText);
  os << llvm::json::Value(std::move(result->manifest));
  Manifest manifest;
  if (!parseManifest(manifestText, manifest, error)) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }
  std::map<std::string, std::vector<uint8_t>> artifacts;
  for (const nabla::Artifact &artifact : result->artifacts)
    artifacts[artifact.fileName()].assign(artifact.contents.begin(),
                                          artifact.contents.end());
  return runKernel(*device, manifest, artifacts, options);
}
