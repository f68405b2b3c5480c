//===- AssembleCubin.cpp - Assemble PTX objects into cubins ---------------===//
//
// The NVVM pipeline serializes each GPU module once, to PTX; this pass runs
// the CUDA toolkit's ptxas on that PTX so that the same gpu.binary carries
// both the portable PTX and a cubin for the chip, without compiling the LLVM
// IR twice.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/ChildProcess.h"
#include "nabla/Support/OptionNames.h"
#include "nabla/Support/TargetOptions.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace nabla {
#define GEN_PASS_DEF_ASSEMBLECUBIN
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

struct AssembleCubin : public nabla::SuggestOptionNames<
                           nabla::impl::AssembleCubinBase<AssembleCubin>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    FailureOr<std::string> ptxas = findPtxas();
    if (failed(ptxas))
      return signalPassFailure();
    // Every PTX object of every gpu.binary, assembled concurrently (one
    // ptxas per object, as many at once as the context's thread pool has
    // threads); the cubins are attached in order afterwards.
    struct Job {
      gpu::BinaryOp binary;
      gpu::ObjectAttr object;
      NVVM::NVVMTargetAttr target;
      std::string cubin;
    };
    std::vector<Job> jobs;
    getOperation().walk([&](gpu::BinaryOp binary) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
        if (target && object.getFormat() == gpu::CompilationTarget::Assembly)
          jobs.push_back({binary, object, target, {}});
      }
    });
    if (failed(failableParallelForEach(
            &getContext(), jobs, [&](Job &job) -> LogicalResult {
              FailureOr<std::string> cubin =
                  assemble(job.binary, *ptxas, job.target.getChip(),
                           job.object.getObject());
              if (failed(cubin))
                return failure();
              job.cubin = std::move(*cubin);
              return success();
            })))
      return signalPassFailure();
    for (Job &job : jobs) {
      SmallVector<Attribute> objects(job.binary.getObjects().begin(),
                                     job.binary.getObjects().end());
      objects.push_back(gpu::ObjectAttr::get(
          job.target, gpu::CompilationTarget::Binary,
          StringAttr::get(&getContext(), job.cubin),
          job.object.getProperties(), job.object.getKernels()));
      job.binary.setObjectsAttr(ArrayAttr::get(&getContext(), objects));
    }
  }

  /// Locates ptxas in the toolkit option, $CUDA_PATH, /usr/local/cuda or PATH.
  FailureOr<std::string> findPtxas() {
    std::string ptxas = nabla::findPtxas(toolkitPath);
    if (!ptxas.empty())
      return ptxas;
    getOperation().emitError(
        "ptxas not found (looked in the 'toolkit' option, $CUDA_PATH, "
        "/usr/local/cuda/bin and PATH); it is needed to produce cubins");
    return failure();
  }

  /// Runs ptxas on `ptx` for `chip` (and nvlink on its object, for a PTX
  /// making many calls); returns the cubin bytes.
  FailureOr<std::string> assemble(gpu::BinaryOp binary, StringRef ptxas,
                                  StringRef chip, StringRef ptx) {
    // Removed on every path, also when the tool is interrupted (and ptxas,
    // which can take gigabytes on a large kernel, killed).
    nabla::TemporaryFile input, object, output, log;
    int fd;
    if (input.create("nabla", "ptx", &fd) || object.create("nabla", "o") ||
        output.create("nabla", "cubin") || log.create("nabla", "log")) {
      binary.emitError("cannot create temporary files for ptxas");
      return failure();
    }
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << ptx;
    }
    std::string arch = ("-arch=" + chip).str();
    // ptxas's optimizer grows much faster than the PTX: beyond
    // `large-ptx-lines` (a gradient of thousands of ops) it would take
    // minutes and gigabytes, so such a module is assembled without it.
    int level = optLevel;
    int64_t lines = llvm::count(ptx, '\n');
    if (largePtxLines > 0 && lines > largePtxLines && level > 0) {
      binary.emitWarning() << "PTX of " << lines
                           << " lines: assembled with ptxas -O0 (its "
                              "optimizer's time grows superlinearly beyond "
                           << largePtxLines.getValue()
                           << " lines; the large-ptx-lines option moves the "
                              "limit, 0 removes it)";
      level = 0;
    }
    std::string opt = "-O" + std::to_string(level);
    // A whole program's time in ptxas grows with the square of the calls its
    // kernels make (8,000 calls from one kernel: 4.2 s whole, 0.8 s
    // relocatable, CUDA 13.0): past `relocatable-calls`, the PTX is
    // assembled as relocatable code and linked alone by nvlink.
    std::string nvlink;
    if (relocatableCalls > 0 && countCalls(ptx) > relocatableCalls)
      nvlink = nabla::findNvlink(ptxas);
    SmallVector<StringRef> args = {
        ptxas,        arch, opt,
        input.path(), "-o", nvlink.empty() ? output.path() : object.path()};
    if (!nvlink.empty())
      args.push_back("-c");
    if (failed(run(binary, "ptxas", chip, args, log.path())))
      return failure();
    if (!nvlink.empty() &&
        failed(run(binary, "nvlink", chip,
                   {nvlink, arch, object.path(), "-o", output.path()},
                   log.path())))
      return failure();
    auto cubin = llvm::MemoryBuffer::getFile(output.path(), /*IsText=*/false);
    if (!cubin) {
      binary.emitError("cannot read the cubin written by ptxas");
      return failure();
    }
    return (*cubin)->getBuffer().str();
  }

  /// The call instructions of `ptx`.
  static int64_t countCalls(StringRef ptx) {
    return ptx.count("\tcall.uni") + ptx.count("\tcall ");
  }

  /// Runs `tool` with `args` (its output in `log`); a failure is an error on
  /// `binary` carrying that output.
  LogicalResult run(gpu::BinaryOp binary, StringRef tool, StringRef chip,
                    ArrayRef<StringRef> args, StringRef log) {
    std::optional<StringRef> redirects[] = {std::nullopt, log, log};
    std::string error;
    int code = nabla::runChildProcess(args.front(), args, redirects, error);
    if (code == 0)
      return success();
    auto logText = llvm::MemoryBuffer::getFile(log);
    binary.emitError() << tool << " failed for " << chip << " (exit " << code
                       << "): "
                       << (logText ? (*logText)->getBuffer().trim()
                                   : StringRef(error));
    return failure();
  }
};

} // namespace
