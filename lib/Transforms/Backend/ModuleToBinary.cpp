//===- ModuleToBinary.cpp - Serialize gpu.modules, library calls bounded --===//
//
// Upstream's gpu-module-to-binary, with a hook after the device library is
// linked: libdevice (and OCML) mark every function alwaysinline, so a kernel
// that calls `__nv_sinf` two thousand times (the gradient of a long
// computation: each sin's derivative is a cos, recomputation adds more)
// carries two thousand copies of its body, slow path included, and the PTX
// assembler's time and memory grow with the copies. A library function used
// from more than `outline-calls` call sites is kept out of line instead: one
// definition the call sites call. Then, on the optimized IR, a value that
// lives across many of those calls goes to the stack frame
// (CallCrossingValues.cpp, `call-crossing`) and a function making many calls
// is split into functions of about `call-chunk` calls (CallChunks.cpp).
// ROCDL modules are serialized here (ROCDLSerializer.cpp): upstream's ROCDL
// serializer would not run these hooks.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "CallChunks.h"
#include "CallCrossingValues.h"
#include "ROCDLSerializer.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/ADT/StringSwitch.h"

namespace nabla {
#define GEN_PASS_DEF_MODULETOBINARY
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

bool isDeviceLibraryFunction(const llvm::Function &function) {
  llvm::StringRef name = function.getName();
  return name.starts_with("__nv_") || name.starts_with("__ocml_") ||
         name.starts_with("__ockl_");
}

/// Keeps each device-library function used from more than `threshold`
/// call sites out of line.
void outlineHeavilyUsed(llvm::Module &module, int64_t threshold) {
  if (threshold <= 0)
    return;
  for (llvm::Function &function : module) {
    if (function.isDeclaration() || !isDeviceLibraryFunction(function) ||
        function.getNumUses() <= static_cast<unsigned>(threshold))
      continue;
    function.removeFnAttr(llvm::Attribute::AlwaysInline);
    function.addFnAttr(llvm::Attribute::NoInline);
    // The NVPTX back end asks, at every call of a local function, whether
    // its address is taken, walking all its uses: thousands of calls of
    // __nv_sinf made that quadratic (16 % of a 8000-op gradient's compile).
    // An external function is not asked.
    if (module.getTargetTriple().isNVPTX())
      function.setLinkage(llvm::GlobalValue::ExternalLinkage);
  }
}

struct ModuleToBinary : public nabla::impl::ModuleToBinaryBase<ModuleToBinary> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<gpu::CompilationTarget> format =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(
            compilationTarget)
            .Cases({"offloading", "llvm"}, gpu::CompilationTarget::Offload)
            .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
            .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
            .Case("fatbin", gpu::CompilationTarget::Fatbin)
            .Default(std::nullopt);
    if (!format) {
      getOperation().emitError("nabla-module-to-binary: unknown format '")
          << compilationTarget << "' (llvm, isa, bin or fatbin)";
      return signalPassFailure();
    }
    // The parent symbol table, built only if a target asks for it.
    std::unique_ptr<SymbolTable> parentTable;
    auto lazyTable = [&]() -> SymbolTable * {
      if (!parentTable)
        parentTable = std::make_unique<SymbolTable>(getOperation());
      return parentTable.get();
    };
    int64_t threshold = outlineCalls;
    auto linked = [threshold](llvm::Module &module) {
      outlineHeavilyUsed(module, threshold);
    };
    int64_t crossing = callCrossing, chunk = callChunk;
    auto optimized = [crossing, chunk](llvm::Module &module) {
      nabla::keepCallCrossingValuesInMemory(module, crossing);
      nabla::splitLongCallSequences(module, chunk);
    };
    gpu::TargetOptions options(toolkitPath, /*librariesToLink=*/{},
                               /*cmdOptions=*/"", /*elfSection=*/"", *format,
                               lazyTable, /*initialLlvmIRCallback=*/{}, linked,
                               optimized);
    // ROCDL modules here (upstream's serializer would drop the callbacks),
    // the others upstream's way.
    SmallVector<gpu::GPUModuleOp> rocdl;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      if (nabla::hasOnlyROCDLTargets(module))
        rocdl.push_back(module);
    });
    for (gpu::GPUModuleOp module : rocdl)
      if (failed(nabla::serializeROCDLModule(module, options)))
        return signalPassFailure();
    if (failed(gpu::transformGpuModulesToBinaries(
            getOperation(), gpu::OffloadingLLVMTranslationAttrInterface(nullptr),
            options)))
      return signalPassFailure();
  }
};

} // namespace
