//===- NablaModule.cpp - pybind11 bindings of Nabla (`nabla._nabla`) ------===//
//
// The native half of the `nabla` Python package: a context with every
// dialect, module parsing/printing, pass pipelines, compilation to target
// artifacts, kernel launches on the runtime's devices and the sizes
// nabla/Support/Limits.h accepts (`_nabla.limits`). Diagnostics are
// collected and raised as nabla.MLIRError by the Python half; the GIL is
// released while passes, compilation and kernels run. This file is compiled
// with RTTI and exceptions (pybind11 needs both) and binds only its own
// wrapper types, never LLVM/MLIR classes. CUDA and HIP sources are compiled
// here too (nabla/Frontend/GPUSource.h), so that `nabla.cuda` and
// `nabla-run FILE.cu` share one clang command line.
//
//===----------------------------------------------------------------------===//

#include "nabla/Compile/Compile.h"
#include "nabla/Compile/CompileCache.h"
#include "nabla/Conversion/LLVMToNabla/ImportLLVMIR.h"
#include "nabla/Conversion/Passes.h"
#include "nabla/Frontend/GPUSource.h"
#include "nabla/Frontend/KernelNames.h"
#include "nabla/InitAll.h"
#include "nabla/Runtime/Device.h"
#include "nabla/Runtime/KernelLaunch.h"
#include "nabla/Support/Limits.h"
#include "nabla/Support/SourceChecks.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <unistd.h>

namespace py = pybind11;
using namespace nabla;

namespace {

/// A diagnostic as the Python side sees it: (severity, location, message).
using Diagnostic = std::tuple<std::string, std::string, std::string>;

/// Raised to Python as nabla.MLIRError with the collected diagnostics.
struct DiagnosticsError {
  std::string summary;
  std::vector<Diagnostic> diagnostics;
};

/// Raised to Python as nabla.cuda.CompileError: clang rejected a source.
struct ClangFailure {
  std::string diagnostics;
};

/// Owns an MLIRContext with every upstream and Nabla dialect loaded.
class Context {
public:
  Context() {
    static std::once_flag passes;
    std::call_once(passes, [] {
      mlir::registerAllPasses();
      nabla::registerAllPasses();
    });
    mlir::DialectRegistry registry;
    nabla::registerUpstreamDialects(registry);
    nabla::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.printOpOnDiagnostic(false);
  }
  mlir::MLIRContext context;
};

/// A location as compilers print them: `file:line:col`; a call site as
/// `callee (called from caller)`; a fused location (clang's debug scopes)
/// as its first known part; a name location as its child, else its name.
void printLocation(mlir::Location location, llvm::raw_ostream &os) {
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(location)) {
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  } else if (auto call = llvm::dyn_cast<mlir::CallSiteLoc>(location)) {
    printLocation(call.getCallee(), os);
    os << " (called from ";
    printLocation(call.getCaller(), os);
    os << ")";
  } else if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(location)) {
    auto known = llvm::find_if(fused.getLocations(), [](mlir::Location part) {
      return !llvm::isa<mlir::UnknownLoc>(part);
    });
    if (known == fused.getLocations().end())
      os << "unknown";
    else
      printLocation(*known, os);
  } else if (auto name = llvm::dyn_cast<mlir::NameLoc>(location)) {
    if (llvm::isa<mlir::UnknownLoc>(name.getChildLoc()))
      os << name.getName().getValue();
    else
      printLocation(name.getChildLoc(), os);
  } else if (llvm::isa<mlir::UnknownLoc>(location)) {
    os << "unknown";
  } else {
    os << location;
  }
}

/// Collects diagnostics while alive.
class Collector {
public:
  explicit Collector(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diag) {
          std::string location, message;
          llvm::raw_string_ostream locationStream(location);
          printLocation(diag.getLocation(), locationStream);
          message = diag.str();
          const char *severity =
              diag.getSeverity() == mlir::DiagnosticSeverity::Error ? "error"
              : diag.getSeverity() == mlir::DiagnosticSeverity::Warning
                  ? "warning"
              : diag.getSeverity() == mlir::DiagnosticSeverity::Remark
                  ? "remark"
                  : "note";
          diagnostics.emplace_back(severity, location, message);
          for (mlir::Diagnostic &note : diag.getNotes()) {
            std::string noteLocation;
            llvm::raw_string_ostream noteStream(noteLocation);
            printLocation(note.getLocation(), noteStream);
            diagnostics.emplace_back("note", noteLocation, note.str());
          }
          return mlir::success();
        }) {}
  std::vector<Diagnostic> diagnostics;

  [[noreturn]] void raise(const std::string &summary) {
    throw DiagnosticsError{summary, diagnostics};
  }

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// A parsed module and the context it lives in.
class Module {
public:
  Module(std::shared_ptr<Context> context,
         mlir::OwningOpRef<mlir::ModuleOp> module)
      : context(std::move(context)), module(std::move(module)) {}

  static Module parse(std::shared_ptr<Context> context,
                      const std::string &text) {
    Collector collector(context->context);
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "<string>"), llvm::SMLoc());
    auto module = nabla::parseCheckedModule(sourceMgr, &context->context);
    if (!module)
      collector.raise("failed to parse the module");
    return Module(std::move(context), std::move(module));
  }

  /// A frontend's LLVM IR (text or bitcode), imported and raised by
  /// --nabla-raise-llvm into a gpu.module named `moduleName`; with `kernel`
  /// (the IR's or the source's name), only that kernel and what it reaches.
  /// Returns (module, {function: parameter names}, the kernel's IR name).
  static py::tuple parseLLVMIR(std::shared_ptr<Context> context,
                               const std::string &data,
                               const std::string &moduleName,
                               const std::string &kernel) {
    Collector collector(context->context);
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(data, "<llvm-ir>.ll"),
        llvm::SMLoc());
    auto module = nabla::importLLVMIR(sourceMgr, &context->context);
    if (!module)
      collector.raise("failed to read the LLVM IR");
    nabla::RaiseLLVMOptions options;
    options.moduleName = moduleName;
    if (!kernel.empty()) {
      llvm::Expected<std::string> resolved =
          nabla::resolveKernelName(nabla::getLLVMKernelNames(*module), kernel);
      if (!resolved)
        throw py::value_error(llvm::toString(resolved.takeError()));
      options.kernel = *resolved;
    }
    mlir::PassManager raise(&context->context);
    raise.addPass(nabla::createRaiseLLVM(options));
    if (mlir::failed(raise.run(*module)))
      collector.raise("failed to raise the LLVM IR");
    std::map<std::string, std::vector<std::string>> names =
        nabla::getParameterNames(llvm::MemoryBufferRef(data, "<llvm-ir>.ll"));
    return py::make_tuple(Module(std::move(context), std::move(module)), names,
                          options.kernel);
  }

  std::string str() const {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return text;
  }

  /// The text with every op's location, so that a module parsed from it
  /// reports errors at the original lines (a .cu file's, a .ll's).
  std::string strWithLocations() const {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, mlir::OpPrintingFlags().enableDebugInfo(
                          /*enable=*/true, /*prettyForm=*/false));
    return text;
  }

  Module clone() const {
    return Module(context, mlir::OwningOpRef<mlir::ModuleOp>(module->clone()));
  }

  void runPipeline(const std::string &pipeline) {
    Collector collector(context->context);
    std::string error;
    llvm::raw_string_ostream errors(error);
    // The text names its anchor ("builtin.module(...)"), as with mlir-opt's
    // --pass-pipeline.
    mlir::FailureOr<mlir::OpPassManager> parsed =
        mlir::parsePassPipeline(pipeline, errors);
    if (mlir::failed(parsed))
      throw DiagnosticsError{"invalid pass pipeline: " + error, {}};
    if (parsed->getOpAnchorName() != mlir::ModuleOp::getOperationName())
      throw DiagnosticsError{"the pass pipeline must be anchored on "
                             "builtin.module, e.g. builtin.module(cse)",
                             {}};
    mlir::PassManager pm(&context->context);
    static_cast<mlir::OpPassManager &>(pm) = std::move(*parsed);
    mlir::LogicalResult result = mlir::failure();
    {
      py::gil_scoped_release release;
      result = pm.run(*module);
    }
    if (mlir::failed(result))
      collector.raise("pass pipeline failed");
  }

  std::shared_ptr<Context> context;
  /// Printing and cloning do not change the module; OwningOpRef's accessors
  /// are non-const.
  mutable mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Compiles a copy of `module`; returns ({file: bytes}, manifest JSON).
py::tuple compile(const Module &source, const std::string &target,
                  const std::string &chip, const std::string &abi,
                  std::vector<int64_t> workgroupSize, unsigned subgroupSize,
                  int optLevel, const std::string &onlyKernel,
                  int64_t dynamicSharedMemory, bool cache, int64_t loopLimit) {
  std::optional<CompileTarget> parsed = parseCompileTarget(target);
  if (!parsed)
    throw py::value_error("unknown target '" + target +
                          "' (expected nvvm, rocdl, spirv or metal)");
  llvm::Expected<KernelCacheConfig> cacheConfig =
      KernelCacheConfig::fromEnvironment(cache);
  if (!cacheConfig)
    throw py::value_error(llvm::toString(cacheConfig.takeError()));
  KernelCache kernelCache(std::move(*cacheConfig));
  Module module = source.clone();
  CompileOptions options;
  options.target = *parsed;
  options.chip = chip;
  options.abi = abi;
  options.optLevel = optLevel;
  options.workgroupSize.assign(workgroupSize.begin(), workgroupSize.end());
  options.subgroupSize = subgroupSize;
  options.onlyKernel = onlyKernel;
  options.dynamicSharedMemory = dynamicSharedMemory;
  options.loopLimit = loopLimit;
  Collector collector(module.context->context);
  mlir::FailureOr<CompileResult> result = mlir::failure();
  {
    py::gil_scoped_release release;
    result = compileModuleCached(*module.module, options, kernelCache);
  }
  if (mlir::failed(result))
    collector.raise("compilation for " + target + " failed");
  py::dict artifacts;
  for (const Artifact &artifact : result->artifacts)
    artifacts[py::str(artifact.fileName())] = py::bytes(artifact.contents);
  std::string manifest;
  llvm::raw_string_ostream os(manifest);
  os << llvm::json::Value(std::move(result->manifest));
  return py::make_tuple(artifacts, manifest);
}

/// The parameters of every kernel of `module` as written (before any
/// lowering): the manifest's "kernels" entries, as JSON text.
std::string describeModuleKernels(const Module &module) {
  CompileOptions options;
  options.target = CompileTarget::SPIRV;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(describeKernels(*module.module, options));
  return text;
}

/// The parameter types of the module's top-level func.func `name` (a host
/// function), as MLIR prints them; empty if there is none.
std::optional<std::vector<std::string>>
hostFunctionParameters(const Module &module, const std::string &name) {
  auto function = module.module->lookupSymbol<mlir::func::FuncOp>(name);
  if (!function)
    return std::nullopt;
  std::vector<std::string> types;
  for (mlir::Type type : function.getArgumentTypes()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    type.print(os);
    types.push_back(text);
  }
  return types;
}

/// {kernel: argument names} of the gpu.func kernels whose arguments carry
/// name locations (`%arg0: f32 loc("alpha")`): a frontend's way to keep
/// source names in MLIR. Arguments without one are "".
std::map<std::string, std::vector<std::string>>
locationNames(const Module &module) {
  std::map<std::string, std::vector<std::string>> result;
  module.module->walk([&](mlir::gpu::GPUFuncOp kernel) {
    if (!kernel.isKernel())
      return;
    std::vector<std::string> names;
    bool any = false;
    for (mlir::BlockArgument argument : kernel.getArguments()) {
      auto name = llvm::dyn_cast<mlir::NameLoc>(argument.getLoc());
      names.push_back(name ? name.getName().str() : "");
      any |= bool(name);
    }
    if (any)
      result[kernel.getName().str()] = std::move(names);
  });
  return result;
}

/// clang's device LLVM IR of CUDA/HIP source `text`, compiled as file
/// `fileName` (its name in diagnostics and locations): (LLVM IR, warnings).
/// `searchFrom` is where enzyme.h's share/nabla/include is looked for.
py::tuple compileSourceText(const std::string &text,
                            const std::string &fileName,
                            const std::string &language,
                            const std::string &arch,
                            std::vector<std::string> extraArgs,
                            const std::string &searchFrom) {
  GPUSourceOptions options;
  if (language == "cuda")
    options.language = GPUSourceLanguage::CUDA;
  else if (language == "hip")
    options.language = GPUSourceLanguage::HIP;
  else
    throw py::value_error("unknown source language '" + language +
                          "' (cuda or hip)");
  options.arch = arch;
  options.extraArgs = std::move(extraArgs);
  options.searchFrom = searchFrom;
  if (llvm::Expected<std::string> clang = findClang(); !clang) {
    std::string message = llvm::toString(clang.takeError());
    PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
    throw py::error_already_set();
  }
  std::optional<llvm::Expected<GPUSourceResult>> result;
  {
    py::gil_scoped_release release;
    result.emplace(compileGPUSourceText(text, fileName, options));
  }
  if (!*result) {
    std::optional<std::string> diagnostics;
    std::string failure;
    llvm::handleAllErrors(
        result->takeError(),
        [&](const ClangDiagnosticsError &error) {
          diagnostics = error.diagnostics;
        },
        [&](const llvm::ErrorInfoBase &error) { failure = error.message(); });
    if (diagnostics)
      throw ClangFailure{*diagnostics};
    throw std::runtime_error(failure);
  }
  return py::make_tuple((*result)->llvmIR, (*result)->warnings);
}

/// The contents of a C-contiguous buffer (a numpy array or bytes), copied
/// once into the runtime's storage; a strided one raises BufferError.
std::vector<uint8_t> bufferBytes(const py::handle &object) {
  Py_buffer view;
  if (PyObject_GetBuffer(object.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0)
    throw py::error_already_set();
  const auto *begin = static_cast<const uint8_t *>(view.buf);
  std::vector<uint8_t> bytes(begin, begin + view.len);
  PyBuffer_Release(&view);
  return bytes;
}

/// A writable numpy uint8 array that takes over `bytes` without copying.
py::array takeBytes(std::vector<uint8_t> &&bytes) {
  auto *owned = new std::vector<uint8_t>(std::move(bytes));
  py::capsule free(
      owned, [](void *p) { delete static_cast<std::vector<uint8_t> *>(p); });
  return py::array_t<uint8_t>({static_cast<py::ssize_t>(owned->size())},
                              owned->data(), free);
}

/// Opens a device: (name, chip, subgroup size).
py::tuple deviceInfo(const std::string &target, int index) {
  std::string error;
  std::unique_ptr<runtime::Device> device =
      runtime::openDevice(target, index, error);
  if (!device)
    throw std::runtime_error(error);
  const runtime::DeviceInfo &info = device->info();
  return py::make_tuple(info.name, info.chip, info.subgroupSize);
}

/// Launches `kernel`. `args` holds, per parameter (including the table
/// strategy's relocation parameters), a C-contiguous buffer (numpy array or
/// bytes): the buffer's data or the scalar's little-endian value, or for a
/// buffer in CUDA device memory the tuple (pointer, bytes, stream), passed
/// in place; `shapes` the buffers' shapes. `patches` maps the key of each
/// patch record of the kernel's module to its object's bytes. The kernel runs
/// `repeat` times, each from the same inputs. Returns the buffers' final
/// bytes as numpy uint8 arrays that own them (None for scalars and device
/// buffers) and the patch objects' final bytes likewise; with `timing`, also
/// a dict of the times in nanoseconds (kernel_ns, upload_ns, download_ns,
/// launch_wall_ns) and the device (backend, device).
py::tuple launch(const std::string &manifestText, py::dict artifactBytes,
                 const std::string &kernelName, std::vector<uint32_t> grid,
                 std::vector<uint32_t> block, py::list args,
                 std::vector<std::vector<int64_t>> shapes, py::dict patches,
                 const std::string &target, int index, unsigned timeout,
                 int64_t repeat, bool timing, int64_t sharedMemory,
                 uint64_t maxTapeBytes) {
  if (repeat < 1 || repeat > kMaxLaunchRepeat)
    throw py::value_error("repeat must be 1 to " +
                          std::to_string(kMaxLaunchRepeat) + ", got " +
                          std::to_string(repeat));
  runtime::Manifest manifest;
  std::string error;
  if (!runtime::parseManifest(manifestText, manifest, error))
    throw std::runtime_error(error);
  const runtime::KernelInfo *kernel = manifest.findKernel(kernelName);
  if (!kernel)
    throw py::value_error("unknown kernel '" + kernelName + "'");
  auto dim = [](const std::vector<uint32_t> &v) {
    return runtime::Dim3{v.size() > 0 ? v[0] : 1, v.size() > 1 ? v[1] : 1,
                         v.size() > 2 ? v[2] : 1};
  };
  if (sharedMemory > kMaxDynamicSharedMemory)
    throw py::value_error("shared_memory must be at most 2^31 bytes");
  if (!runtime::checkDynamicSharedMemory(*kernel, sharedMemory, error))
    throw py::value_error(error);
  std::unique_ptr<runtime::Device> device =
      runtime::openDevice(target, index, error);
  if (!device)
    throw std::runtime_error(error);
  std::vector<uint8_t> image;
  std::string kind;
  for (const char *ext : {"spv", "cubin", "ptx", "hsaco"}) {
    std::string name = kernel->module + "." + ext;
    if (artifactBytes.contains(name)) {
      std::string bytes = artifactBytes[py::str(name)].cast<std::string>();
      image.assign(bytes.begin(), bytes.end());
      kind = ext;
      break;
    }
  }
  std::vector<runtime::HostParam> params(kernel->params.size());
  for (size_t k = 0; k < params.size(); ++k) {
    params[k].info = &kernel->params[k];
    if (kernel->params[k].isBuffer && py::isinstance<py::tuple>(args[k])) {
      auto device = args[k].cast<std::tuple<uint64_t, uint64_t, uint64_t>>();
      params[k].onDevice = true;
      params[k].device = {std::get<0>(device), std::get<1>(device),
                          std::get<2>(device)};
      params[k].buffer.dtype =
          runtime::dtypeForElementType(kernel->params[k].element);
      params[k].buffer.shape = shapes[k];
      continue;
    }
    std::vector<uint8_t> bytes = bufferBytes(args[k]);
    if (kernel->params[k].isBuffer) {
      params[k].buffer.dtype =
          runtime::dtypeForElementType(kernel->params[k].element);
      params[k].buffer.shape = shapes[k];
      params[k].buffer.data = std::move(bytes);
    } else {
      if (bytes.size() > sizeof(params[k].scalar))
        throw py::value_error("scalar parameter #" + std::to_string(k) +
                              " has more than 8 bytes");
      params[k].scalarBytes = bytes.size();
      std::copy(bytes.begin(), bytes.end(), params[k].scalar);
    }
  }
  // Patch objects, in manifest order, for the records of the module.
  std::vector<runtime::NpyArray> objects;
  std::vector<const runtime::RelocationInfo *> patched;
  for (const runtime::RelocationInfo &record : manifest.relocations)
    if (record.module == kernel->module && record.strategy == "patch") {
      if (!patches.contains(record.key))
        throw py::value_error("module '" + kernel->module +
                              "' reads the relocated object '" + record.key +
                              "': pass it in relocs");
      objects.emplace_back();
      objects.back().data = bufferBytes(patches[py::str(record.key)]);
      patched.push_back(&record);
    }
  runtime::LaunchSpec spec{kernel, dim(grid), dim(block), &image, kind};
  if (auto printf = manifest.printf.find(kernel->module);
      printf != manifest.printf.end())
    spec.printf = &printf->second;
  if (auto globals = manifest.globals.find(kernel->module);
      globals != manifest.globals.end())
    spec.globals = &globals->second;
  device->setTimeout(timeout);
  spec.repeat = static_cast<unsigned>(repeat);
  spec.maxTapeBytes = maxTapeBytes;
  spec.dynamicSharedMemory =
      static_cast<uint32_t>(std::max<int64_t>(0, sharedMemory));
  runtime::LaunchTiming times;
  if (timing)
    spec.timing = &times;
  for (size_t i = 0; i < patched.size(); ++i)
    spec.patches.push_back({patched[i]->key, patched[i]->symbol,
                            patched[i]->pointer, patched[i]->constant,
                            &objects[i]});
  std::string failure;
  {
    py::gil_scoped_release release;
    auto start = std::chrono::steady_clock::now();
    if (runtime::Error e = runtime::launchKernel(*device, spec, params))
      failure = e.message();
    times.launchWallNs = runtime::elapsedNs(start);
  }
  if (!failure.empty())
    throw std::runtime_error(failure);
  py::list outputs;
  for (runtime::HostParam &param : params)
    if (param.info->isBuffer && !param.onDevice)
      outputs.append(takeBytes(std::move(param.buffer.data)));
    else
      outputs.append(py::none());
  py::dict patchOutputs;
  for (size_t i = 0; i < patched.size(); ++i)
    patchOutputs[py::str(patched[i]->key)] =
        takeBytes(std::move(objects[i].data));
  if (!timing)
    return py::make_tuple(outputs, patchOutputs);
  py::dict measured;
  measured["kernel_ns"] = times.kernelNs;
  measured["first_launch_ns"] = times.firstLaunchNs;
  measured["upload_ns"] = times.uploadNs;
  measured["download_ns"] = times.downloadNs;
  measured["launch_wall_ns"] = times.launchWallNs;
  measured["backend"] = device->info().backend;
  measured["device"] = device->info().name;
  return py::make_tuple(outputs, patchOutputs, measured);
}

/// The text `mlir-opt --help` would show for registered passes.
std::string registeredPasses() {
  static std::once_flag passes;
  std::call_once(passes, [] {
    mlir::registerAllPasses();
    nabla::registerAllPasses();
  });
  // printRegisteredPasses writes to stdout: capture it through a temp file.
  std::fflush(stdout);
  llvm::outs().flush();
  FILE *capture = std::tmpfile();
  int saved = dup(STDOUT_FILENO);
  dup2(fileno(capture), STDOUT_FILENO);
  mlir::printRegisteredPasses();
  // printRegisteredPasses lists passes only; add the named pipelines.
  for (const char *name :
       {"nabla-to-nvvm", "nabla-to-rocdl", "nabla-to-spirv", "nabla-to-metal",
        "gpu-lower-to-nvvm-pipeline", "sparsifier"})
    if (const mlir::PassPipelineInfo *info =
            mlir::PassPipelineInfo::lookup(name))
      info->printHelpStr(/*indent=*/2, /*descIndent=*/50);
  llvm::outs().flush();
  std::fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  std::rewind(capture);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), capture)) > 0)
    text.append(buffer, n);
  std::fclose(capture);
  return text;
}

} // namespace

PYBIND11_MODULE(_nabla, m) {
  m.doc() = "Native half of the nabla package (use `import nabla`).";
  static py::exception<DiagnosticsError> diagnosticsError(m,
                                                          "_DiagnosticsError");
  static py::exception<ClangFailure> clangError(m, "_ClangError");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const ClangFailure &e) {
      PyErr_SetString(clangError.ptr(), e.diagnostics.c_str());
    } catch (const DiagnosticsError &e) {
      py::list diagnostics;
      for (const auto &[severity, location, message] : e.diagnostics)
        diagnostics.append(py::make_tuple(severity, location, message));
      py::tuple payload = py::make_tuple(e.summary, diagnostics);
      PyErr_SetObject(diagnosticsError.ptr(), payload.ptr());
    }
  });

  py::class_<Context, std::shared_ptr<Context>>(m, "Context").def(py::init<>());
  py::class_<Module>(m, "Module")
      .def_static("parse", &Module::parse, py::arg("context"), py::arg("text"))
      .def_static("parse_llvm_ir", &Module::parseLLVMIR, py::arg("context"),
                  py::arg("data"), py::arg("module_name"),
                  py::arg("kernel") = "")
      .def("__str__", &Module::str)
      .def("str_with_locations", &Module::strWithLocations)
      .def("clone", &Module::clone)
      .def("run_pipeline", &Module::runPipeline, py::arg("pipeline"));
  m.def("compile", &compile, py::arg("module"), py::arg("target"),
        py::arg("chip"), py::arg("abi"), py::arg("workgroup_size"),
        py::arg("subgroup_size"), py::arg("opt_level"), py::arg("kernel"),
        py::arg("dynamic_shared_memory") = -1, py::arg("cache") = true,
        py::arg("loop_limit") = 0);
  m.def("loop_iteration_limit", &runtime::loopIterationLimit, py::arg("name"));
  // What the kernel caches of this process did (tests read it).
  m.def("cache_statistics", [] {
    KernelCacheStatistics statistics = getKernelCacheStatistics();
    py::dict counts;
    counts["hits"] = statistics.hits;
    counts["misses"] = statistics.misses;
    counts["stores"] = statistics.stores;
    counts["corrupt"] = statistics.corrupt;
    counts["evictions"] = statistics.evictions;
    return counts;
  });
  m.def("describe_kernels", &describeModuleKernels);
  m.def("device_info", &deviceInfo);
  m.def("launch", &launch, py::arg("manifest_text"), py::arg("artifacts"),
        py::arg("kernel"), py::arg("grid"), py::arg("block"), py::arg("args"),
        py::arg("shapes"), py::arg("patches"), py::arg("target"),
        py::arg("index"), py::arg("timeout"), py::arg("repeat") = 1,
        py::arg("timing") = false, py::arg("shared_memory") = -1,
        py::arg("max_tape_bytes") = 0);
  m.def("registered_passes", &registeredPasses);
  m.def("location_names", &locationNames);
  m.def("host_function_parameters", &hostFunctionParameters);
  m.def("compile_gpu_source", &compileSourceText, py::arg("text"),
        py::arg("file_name"), py::arg("language"), py::arg("arch"),
        py::arg("options"), py::arg("search_from"));
  // Kernels named as a C++ source names them (nabla/Frontend/KernelNames.h).
  m.def(
      "kernel_name_matches",
      [](const std::string &symbol, const std::string &name) {
        return kernelNameMatches(symbol, name);
      },
      py::arg("symbol"), py::arg("name"));
  m.def(
      "demangle",
      [](const std::string &symbol) { return getDemangledName(symbol); },
      py::arg("symbol"));
  // The version the tools print (`nabla-opt --version`): nabla.__version__.
  m.attr("version") = NABLA_VERSION;

  // nabla/Support/Limits.h, read by the Python half: it checks grid, block,
  // repeat and shared_memory before compiling (its messages name the
  // argument), against the tools' own limits rather than copies of them.
  py::dict limits;
  limits["source_nesting"] = kMaxSourceNesting;
  limits["workgroup_extent"] = kMaxWorkgroupExtent;
  limits["grid_extent"] = kMaxGridExtent;
  limits["static_bytes"] = kMaxStaticBytes;
  limits["initialized_bytes"] = kMaxInitializedBytes;
  limits["vector_elements"] = kMaxVectorElements;
  limits["launch_repeat"] = kMaxLaunchRepeat;
  limits["dynamic_shared_memory"] = kMaxDynamicSharedMemory;
  m.attr("limits") = limits;
}
