//===- nabla-compile.cpp - Compile kernels to target artifacts ------------===//
//
// nabla-compile FILE.mlir --target=nvvm|rocdl|spirv|metal [--chip=..]
//               [--abi=v1|v2] [--opt-level=N] [--workgroup-size=X[,Y,Z]]
//               [--subgroup-size=N] [--no-cache] -o DIR
// writes DIR/<gpu.module>.{ptx,cubin,hsaco,spv,metal} and DIR/manifest.json,
// from the kernel cache ($NABLA_CACHE_DIR) when it holds them.
// Exit status: 0 success, 1 compile error, 2 usage error.
//
//===----------------------------------------------------------------------===//

#include "nabla/Compile/Compile.h"
#include "nabla/Compile/CompileCache.h"
#include "nabla/Conversion/LLVMToNabla/ImportLLVMIR.h"
#include "nabla/Conversion/Passes.h"
#include "nabla/InitAll.h"
#include "nabla/Runtime/Npy.h"
#include "nabla/Support/Limits.h"
#include "nabla/Support/ToolGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;

static cl::OptionCategory category("nabla-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<input .mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> targetName(
    "target", cl::Required,
    cl::desc("Target: nvvm (PTX, cubin), rocdl (HSACO), spirv (SPIR-V for "
             "Vulkan) or metal (MSL); required"),
    cl::value_desc("nvvm|rocdl|spirv|metal"), cl::cat(category));
static cl::opt<std::string>
    chip("chip",
         cl::desc("GPU architecture: sm_NN for nvvm (default sm_80), gfxNNN "
                  "for rocdl (default gfx90a)"),
         cl::value_desc("CHIP"), cl::cat(category));
static cl::opt<std::string>
    abi("abi", cl::init("v2"),
        cl::desc("Relocation convention of host objects: v1 or v2 (default)"),
        cl::value_desc("v1|v2"), cl::cat(category));
static cl::opt<int>
    optLevel("opt-level", cl::init(2),
             cl::desc("Optimization level of the device code, 0-3 (default 2)"),
             cl::value_desc("N"), cl::cat(category));
static cl::list<int64_t> workgroupSize(
    "workgroup-size", cl::CommaSeparated,
    cl::desc("Workgroup size of SPIR-V/Metal kernels without known_block_size "
             "(the block size they will be launched with)"),
    cl::value_desc("X[,Y,Z]"), cl::cat(category));
static cl::list<int64_t> blockSize("block", cl::CommaSeparated,
                                   cl::desc("Same as --workgroup-size"),
                                   cl::value_desc("X[,Y,Z]"),
                                   cl::cat(category));
static cl::opt<unsigned> subgroupSize(
    "subgroup-size", cl::init(32),
    cl::desc("Subgroup size of the SPIR-V/Metal device (default 32)"),
    cl::value_desc("N"), cl::cat(category));
static cl::opt<int64_t> dynamicSharedMemory(
    "dynamic-shared-memory", cl::init(-1),
    cl::desc("Bytes of dynamic shared memory (extern __shared__) SPIR-V/Metal "
             "kernels are launched with, compiled in and recorded in the "
             "manifest (NVVM/ROCDL take it at launch)"),
    cl::value_desc("BYTES"), cl::cat(category));
static cl::list<std::string> relocs(
    "reloc",
    cl::desc("Contents of a relocation record known ahead of time (abi=v1: "
             "the baked object's bytes, copied into the kernels), from a "
             ".npy file of its dtype and size; repeatable"),
    cl::value_desc("KEY=FILE.npy"), cl::cat(category));
static cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Compile even when the kernel cache ($NABLA_CACHE_DIR) holds "
             "the result, and store nothing there"),
    cl::cat(category));
static cl::opt<std::string>
    outputDir("o", cl::Required, cl::Prefix,
              cl::desc("Output directory, created if missing; required"),
              cl::value_desc("DIR"), cl::cat(category));

static cl::extrahelp examples(R"(
Writes DIR/<gpu.module>.{ptx,cubin,hsaco,spv,metal} and DIR/manifest.json
(kernels, parameter layout, relocation records), which nabla-launch runs.
Results are kept in the kernel cache: $NABLA_CACHE_DIR (default
$XDG_CACHE_HOME/nabla or ~/.cache/nabla), capped by $NABLA_CACHE_SIZE (default
512M); --no-cache or NABLA_NO_CACHE=1 bypasses it.
Exit status: 0 success, 1 compile error, 2 usage error.

EXAMPLES:
  nabla-compile kernel.mlir --target=spirv --block=64 -o out
  nabla-compile kernel.mlir --target=nvvm --chip=sm_90 -o out
  nabla-launch out --kernel=mul_kernel --grid=1 --block=64 --arg=a.npy --arg=index:16
)");

/// --version: Nabla's version and the LLVM/MLIR it was built against.
static void printVersion(raw_ostream &os) {
  os << "nabla-compile (Nabla) " NABLA_VERSION "\n"
     << "  LLVM/MLIR " LLVM_VERSION_STRING "\n";
}

/// Writes `contents` to `path`; reports and returns false on failure.
static bool writeFile(StringRef path, StringRef contents) {
  std::string error;
  auto file = mlir::openOutputFile(path, &error);
  if (!file) {
    errs() << "nabla-compile: " << error << "\n";
    return false;
  }
  file->os() << contents;
  file->keep();
  return true;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  nabla::installToolGuard("nabla-compile");
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(printVersion);
  if (!cl::ParseCommandLineOptions(argc, argv, "Nabla kernel compiler\n",
                                   &errs()))
    return 2;
  std::optional<nabla::CompileTarget> target =
      nabla::parseCompileTarget(targetName);
  if (!target) {
    errs() << "nabla-compile: unknown --target '" << targetName
           << "' (expected nvvm, rocdl, spirv or metal)\n";
    return 2;
  }
  if (abi != "v1" && abi != "v2") {
    errs() << "nabla-compile: unknown --abi '" << abi
           << "' (expected v1 or v2)\n";
    return 2;
  }
  if (!blockSize.empty() && !workgroupSize.empty()) {
    errs() << "nabla-compile: give --block or --workgroup-size, not both\n";
    return 2;
  }
  SmallVector<int64_t, 3> size(workgroupSize.begin(), workgroupSize.end());
  size.append(blockSize.begin(), blockSize.end());
  if (size.size() > 3) {
    errs() << "nabla-compile: --workgroup-size takes at most 3 values\n";
    return 2;
  }
  for (int64_t extent : size)
    if (extent < 1 || extent > nabla::kMaxWorkgroupExtent) {
      errs() << "nabla-compile: workgroup size " << extent
             << " is out of range (1 to " << nabla::kMaxWorkgroupExtent
             << ")\n";
      return 2;
    }
  if (optLevel < 0 || optLevel > 3) {
    errs() << "nabla-compile: --opt-level must be 0 to 3\n";
    return 2;
  }

  Expected<nabla::KernelCacheConfig> cacheConfig =
      nabla::KernelCacheConfig::fromEnvironment(!noCache);
  if (!cacheConfig) {
    errs() << "nabla-compile: " << toString(cacheConfig.takeError()) << "\n";
    return 2;
  }

  mlir::DialectRegistry registry;
  nabla::registerUpstreamDialects(registry);
  nabla::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the op and location; dumping whole lowered modules
  // (a gpu.binary holds the PTX) would bury them.
  context.printOpOnDiagnostic(false);

  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto buffer = mlir::openInputFile(inputFile, &error);
  if (!buffer) {
    errs() << "nabla-compile: " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  bool isLLVMIR = false;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      nabla::parseInputModule(sourceMgr, &context, &isLLVMIR);
  if (!module)
    return 1;
  if (isLLVMIR) {
    // A frontend's kernels: raised first, so that the manifest lists them.
    mlir::PassManager raise(&context);
    raise.addPass(nabla::createRaiseLLVM());
    if (failed(raise.run(*module)))
      return 1;
  }

  nabla::CompileOptions options;
  options.target = *target;
  options.chip = chip;
  options.abi = abi;
  options.optLevel = optLevel;
  options.workgroupSize = size;
  options.subgroupSize = subgroupSize;
  if (dynamicSharedMemory < -1 ||
      dynamicSharedMemory > nabla::kMaxDynamicSharedMemory) {
    errs() << "nabla-compile: --dynamic-shared-memory must be 0 to 2^31 "
              "bytes\n";
    return 2;
  }
  options.dynamicSharedMemory = dynamicSharedMemory;
  for (const std::string &reloc : relocs) {
    size_t equals = reloc.find('=');
    if (equals == std::string::npos || equals == 0 ||
        equals + 1 == reloc.size()) {
      errs() << "nabla-compile: --reloc takes KEY=FILE.npy, got '" << reloc
             << "'\n";
      return 2;
    }
    nabla::runtime::NpyArray array;
    std::string npyError;
    if (!nabla::runtime::readNpy(reloc.substr(equals + 1), array, npyError)) {
      errs() << "nabla-compile: " << npyError << "\n";
      return 1;
    }
    options.relocValues[reloc.substr(0, equals)] = {array.dtype,
                                                    std::move(array.data)};
  }
  FailureOr<nabla::CompileResult> result = nabla::compileModuleCached(
      *module, options, nabla::KernelCache(std::move(*cacheConfig)));
  if (failed(result))
    return 1;

  if (std::error_code ec = sys::fs::create_directories(outputDir)) {
    errs() << "nabla-compile: cannot create '" << outputDir
           << "': " << ec.message() << "\n";
    return 1;
  }
  for (const nabla::Artifact &artifact : result->artifacts) {
    // The structure check rejects such module names; never write outside -o.
    if (sys::path::filename(artifact.fileName()) != artifact.fileName() ||
        StringRef(artifact.fileName()).starts_with(".")) {
      errs() << "nabla-compile: internal error: artifact name '"
             << artifact.fileName() << "' is not a plain file name\n";
      return 1;
    }
    SmallString<128> path(outputDir);
    sys::path::append(path, artifact.fileName());
    if (!writeFile(path, artifact.contents))
      return 1;
  }
  SmallString<128> manifestPath(outputDir);
  sys::path::append(manifestPath, "manifest.json");
  std::string manifest;
  raw_string_ostream os(manifest);
  os << formatv("{0:2}", json::Value(std::move(result->manifest))) << "\n";
  return writeFile(manifestPath, manifest) ? 0 : 1;
}
