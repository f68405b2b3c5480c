//===- HostProgram.cpp - nabla-run --entry: run a whole GPU program -------===//
//
// The target decides the pipeline: vulkan (default, or $NABLA_TARGET) runs
// nabla-to-spirv with the device's subgroup size, cuda nabla-to-nvvm for the
// device's chip, hip nabla-to-rocdl. The lowered module is JIT-compiled and
// linked against libnabla_mgpu.so (found next to the tools, in ../lib, where
// both the build and an installation put it) and MLIR's runner utility and
// async runtime libraries; $NABLA_TARGET is set for the library so that it
// uses the same back end. The entry takes the --arg given (EntryArguments.h)
// and returns nothing or an i32, which becomes the exit status. When it has returned, the
// library's device is closed (nabla_mgpu_shutdown) and the blocks the
// program allocated and did not free are freed (ProgramHeap.h).
//
//===----------------------------------------------------------------------===//

#include "EntryArguments.h"
#include "HostProgram.h"
#include "ProgramHeap.h"

#include "LaunchCommandLine.h"
#include "nabla/InitAll.h"
#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Runtime/Device.h"
#include "nabla/Support/SourceChecks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <iostream>

using namespace mlir;

static const char *kHostUsage =
    "usage: nabla-run FILE.mlir --entry=NAME [--arg=SPEC... | --arg-sets=FILE] "
    "[--out=DIR] "
    "[--target=vulkan|cuda|hip] [--device=N] [--emulate-float-atomics] "
    "[--max-tape-bytes=N]\n";

bool nabla::isHostProgramRun(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (StringRef(argv[i]).starts_with("--entry"))
      return true;
  return false;
}

namespace {

struct HostOptions {
  std::string file, entry, target, out, argSets;
  std::vector<std::string> args;
  int device = -1;
  bool emulateFloatAtomics = false;
  /// The most bytes of a kernel's global-memory tape (0: the runtime's
  /// default), passed to libnabla_mgpu as $NABLA_MAX_TAPE_BYTES.
  uint64_t maxTapeBytes = 0;
};

int usage(const std::string &message) {
  std::cerr << "nabla-run: " << message << "\n" << kHostUsage;
  return 2;
}

/// The directory holding libnabla_mgpu.so: ../lib from this executable.
std::string findWrapperLibrary(const char *argv0) {
  std::string executable =
      llvm::sys::fs::getMainExecutable(argv0, (void *)&findWrapperLibrary);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(executable));
  llvm::sys::path::append(path, "..", "lib", "libnabla_mgpu.so");
  return std::string(path);
}

/// Lowers `module` with the target's pipeline; false after diagnostics.
bool lower(ModuleOp module, const HostOptions &options,
           nabla::runtime::Device &device) {
  PassManager pm(module.getContext());
  if (options.target == "vulkan") {
    nabla::NablaToSPIRVOptions spirv;
    spirv.subgroupSize = device.info().subgroupSize;
    spirv.emulateFloatAtomics = options.emulateFloatAtomics;
    nabla::buildNablaToSPIRVPipeline(pm, spirv);
  } else if (options.target == "cuda") {
    nabla::NablaToNVVMOptions nvvm;
    nvvm.chip = device.info().chip;
    nabla::buildNablaToNVVMPipeline(pm, nvvm);
  } else {
    nabla::NablaToROCDLOptions rocdl;
    rocdl.chip = device.info().chip;
    nabla::buildNablaToROCDLPipeline(pm, rocdl);
  }
  return succeeded(pm.run(module));
}

} // namespace

int nabla::runHostProgram(int argc, char **argv) {
  HostOptions options;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg.consume_front("--entry=")) {
      if (arg.empty())
        return usage("--entry needs a function name");
      options.entry = arg.str();
    } else if (arg.consume_front("--target=")) {
      if (arg != "vulkan" && arg != "cuda" && arg != "hip")
        return usage("unknown target '" + arg.str() +
                     "' (expected vulkan, cuda or hip)");
      options.target = arg.str();
    } else if (arg.consume_front("--device=")) {
      if (arg.getAsInteger(10, options.device) || options.device < 0)
        return usage("malformed --device (expected an index >= 0)");
    } else if (arg.consume_front("--arg=")) {
      options.args.push_back(arg.str());
    } else if (arg.consume_front("--arg-sets=")) {
      if (arg.empty())
        return usage("--arg-sets needs a file");
      options.argSets = arg.str();
    } else if (arg.consume_front("--out=")) {
      if (arg.empty())
        return usage("--out needs a directory");
      options.out = arg.str();
    } else if (arg == "--emulate-float-atomics") {
      options.emulateFloatAtomics = true;
    } else if (arg.consume_front("--max-tape-bytes=")) {
      if (arg.getAsInteger(10, options.maxTapeBytes) ||
          options.maxTapeBytes == 0)
        return usage("malformed --max-tape-bytes (expected a positive "
                     "number of bytes)");
    } else if (arg == "--no-cache") {
      // Accepted as for kernels; a host program is compiled in process on
      // every run, without the kernel cache.
    } else if (arg.starts_with("-")) {
      return usage("unknown option '" + arg.str() +
                   "' (with --entry, kernel launch flags do not apply)");
    } else if (options.file.empty()) {
      options.file = arg.str();
    } else {
      return usage("expected one input file");
    }
  }
  if (options.entry.empty())
    return usage("--entry needs a function name");
  if (options.file.empty())
    return usage("expected one input .mlir file");
  if (options.target.empty()) {
    runtime::LaunchOptions launch;
    options.target = runtime::resolveTarget(launch);
  }

  std::string error;
  std::unique_ptr<runtime::Device> device =
      runtime::openDevice(options.target, options.device, error);
  if (!device) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }

  DialectRegistry registry;
  registerUpstreamDialects(registry);
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto buffer = openInputFile(options.file, &error);
  if (!buffer) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseCheckedModule(sourceMgr, &context);
  if (!module)
    return 1;
  if (!SymbolTable::lookupSymbolIn(*module, options.entry)) {
    std::cerr << "error: '" << options.file << "' has no function '"
              << options.entry << "'\n";
    return 1;
  }
  // The entry's parameters, checked against --arg (or each line of
  // --arg-sets: one run each, outputs in DIR/<line>/) before compiling.
  std::vector<std::vector<std::string>> runs{options.args};
  if (!options.argSets.empty()) {
    if (!options.args.empty())
      return usage("give either --arg or --arg-sets");
    auto sets = openInputFile(options.argSets, &error);
    if (!sets) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    runs.clear();
    SmallVector<StringRef> lines;
    sets->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
    for (StringRef line : lines) {
      SmallVector<StringRef> specs;
      line.split(specs, ' ', -1, /*KeepEmpty=*/false);
      runs.emplace_back();
      for (StringRef spec : specs)
        runs.back().push_back(spec.str());
    }
  }
  std::vector<EntryArguments> arguments(runs.size());
  auto function = module->lookupSymbol<func::FuncOp>(options.entry);
  for (auto [index, run] : llvm::enumerate(runs)) {
    if (!function) {
      if (!run.empty()) {
        std::cerr << "error: --arg needs '" << options.entry
                  << "' to be a func.func\n";
        return 1;
      }
      continue;
    }
    if (!arguments[index].parse(function, run, error)) {
      std::cerr << "error: "
                << (runs.size() > 1 ? "run " + std::to_string(index) + ": "
                                    : std::string())
                << error << "\n";
      return 1;
    }
  }
  bool usesMPI = false;
  module->walk([&](Operation *op) {
    usesMPI |= op->getDialect() &&
               op->getDialect()->getNamespace() == "mpi";
  });
  if (!lower(*module, options, *device))
    return 1;
  auto entry = module->lookupSymbol<LLVM::LLVMFuncOp>(options.entry);
  if (!entry || entry.isExternal()) {
    std::cerr << "error: '" << options.entry
              << "' is not a function with a body\n";
    return 1;
  }
  Type result = entry.getFunctionType().getReturnType();
  bool returnsVoid = isa<LLVM::LLVMVoidType>(result);
  if (arguments.empty() ||
      entry.getNumArguments() != arguments.front().loweredCount() ||
      !(returnsVoid || result.isInteger(32))) {
    std::cerr << "error: entry '" << options.entry
              << "' must take the --arg given (buffers and scalars) and "
                 "return nothing or an i32\n";
    return 1;
  }
  // The device was only needed to compile for it; the wrapper library
  // opens its own.
  device.reset();

  std::string wrappers = findWrapperLibrary(argv[0]);
  if (!llvm::sys::fs::exists(wrappers)) {
    std::cerr << "error: '" << wrappers
              << "' not found (nabla-run looks for libnabla_mgpu.so in the "
                 "lib directory next to its bin directory)\n";
    return 1;
  }
  std::string llvmLib = NABLA_LLVM_LIBRARY_DIR;
  SmallVector<StringRef> libraries;
  std::vector<std::string> paths = {wrappers,
                                    llvmLib + "/libmlir_runner_utils.so",
                                    llvmLib + "/libmlir_c_runner_utils.so",
                                    llvmLib + "/libmlir_async_runtime.so"};
  for (const std::string &path : paths)
    libraries.push_back(path);
  ::setenv("NABLA_TARGET", options.target.c_str(), /*overwrite=*/1);
  if (options.device >= 0)
    ::setenv("NABLA_DEVICE", std::to_string(options.device).c_str(), 1);
  if (options.maxTapeBytes)
    ::setenv("NABLA_MAX_TAPE_BYTES",
             std::to_string(options.maxTapeBytes).c_str(), 1);

  // Programs using the mpi dialect call the MPI library ($NABLA_MPI_LIBRARY,
  // else MPICH's, which scripts/install-deps.sh installs, else OpenMPI's).
  if (usesMPI) {
    std::vector<std::string> candidates;
    if (const char *chosen = std::getenv("NABLA_MPI_LIBRARY"))
      candidates.push_back(chosen);
    candidates.push_back("libmpich.so.12");
    candidates.push_back("libmpi.so.40");
    bool loaded = false;
    for (const std::string &candidate : candidates)
      if (!llvm::sys::DynamicLibrary::LoadLibraryPermanently(
              candidate.c_str()))
        loaded = true;
    if (!loaded) {
      std::cerr << "error: the program uses MPI, but no MPI library could be "
                   "loaded (install MPICH: scripts/install-deps.sh, or set "
                   "NABLA_MPI_LIBRARY)\n";
      return 1;
    }
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ExecutionEngineOptions engineOptions;
  // ExecutionEngineOptions::transformer is a function_ref: the function it
  // refers to must outlive create() (a temporary was a stack-use-after-scope
  // under ASan).
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0,
                                /*targetMachine=*/nullptr);
  engineOptions.transformer = optimize;
  engineOptions.sharedLibPaths = libraries;
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine) {
    std::cerr << "error: cannot JIT-compile the program: "
              << llvm::toString(engine.takeError()) << "\n";
    return 1;
  }
  (*engine)->registerSymbols(programHeapSymbols);
  std::string loadError;
  auto library = llvm::sys::DynamicLibrary::getPermanentLibrary(
      wrappers.c_str(), &loadError);
  WrapperMemory memory;
  auto lookup = [&](auto &function, const char *name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
        library.getAddressOfSymbol(name));
    return function != nullptr;
  };
  if (!lookup(memory.alloc, "mgpuMemAlloc") ||
      !lookup(memory.free, "mgpuMemFree") ||
      !lookup(memory.copy, "mgpuMemcpy") ||
      !lookup(memory.streamCreate, "mgpuStreamCreate") ||
      !lookup(memory.streamSynchronize, "mgpuStreamSynchronize") ||
      !lookup(memory.streamDestroy, "mgpuStreamDestroy")) {
    std::cerr << "error: '" << wrappers << "' lacks the mgpu memory API\n";
    return 1;
  }
  int status = 0;
  for (auto [index, run] : llvm::enumerate(arguments)) {
    std::vector<void *> packed = run.pack(memory);
    int32_t value = 0;
    if (!returnsVoid)
      packed.push_back(&value);
    llvm::Error invoked = (*engine)->invokePacked(options.entry, packed);
    status = value;
    if (invoked) {
      std::cerr << "error: cannot run '" << options.entry
                << "': " << llvm::toString(std::move(invoked)) << "\n";
      return 1;
    }
    std::string out = options.out;
    // Under mpirun every rank writes its own outputs: "{rank}" in --out
    // becomes the process's rank.
    if (size_t at = out.find("{rank}"); at != std::string::npos) {
      const char *rank = std::getenv("PMI_RANK");
      if (!rank)
        rank = std::getenv("OMPI_COMM_WORLD_RANK");
      out.replace(at, 6, rank ? rank : "0");
    }
    if (!out.empty() && !options.argSets.empty())
      out += "/" + std::to_string(index);
    if (!run.finish(memory, out, error)) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    if (status != 0)
      break;
  }
  // Runs the program's global destructors (module unloads) before the
  // output is flushed; then the device and what the program left on the
  // device and the heap go (ProgramHeap.h).
  engine->reset();
  if (auto *shutdown = reinterpret_cast<void (*)()>(
          library.getAddressOfSymbol("nabla_mgpu_shutdown")))
    shutdown();
  releaseProgramHeap();
  std::cout.flush();
  std::fflush(stdout);
  return status;
}
