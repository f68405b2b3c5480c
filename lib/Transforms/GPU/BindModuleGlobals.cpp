//===- BindModuleGlobals.cpp - Module globals as runtime-owned buffers ----===//
//
// SPIR-V for Vulkan has no writable module-scope device memory and keeps no
// large constant arrays outside buffers: each global that needs storage (a
// `__device__` variable, a big `__constant__` table) becomes one more
// storage-buffer parameter of the kernels that read it, and the module
// records the global's contents for the runtime, which allocates the buffer
// when it loads the module and binds it at each launch (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/IR/RelocOps.h"
#include "nabla/Support/ModuleGlobals.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SmallBitVector.h"

#include <map>

namespace nabla {
#define GEN_PASS_DEF_BINDMODULEGLOBALS
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// True if `type` lives in device (global) memory: no memory space or the
/// GPU global address space.
bool inDeviceMemory(MemRefType type) {
  Attribute space = type.getMemorySpace();
  if (!space)
    return true;
  auto gpuSpace = dyn_cast<gpu::AddressSpaceAttr>(space);
  return gpuSpace && gpuSpace.getValue() == gpu::AddressSpace::Global;
}

struct BindModuleGlobals
    : public nabla::impl::BindModuleGlobalsBase<BindModuleGlobals> {
  using Base::Base;

  /// True if `global` needs a runtime-owned buffer.
  bool needsBuffer(memref::GlobalOp global) const {
    MemRefType type = global.getType();
    if (global->hasAttr(nabla::reloc::kRecordKeyAttrName) ||
        !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !inDeviceMemory(type) || !type.getElementType().isIntOrFloat())
      return false;
    Attribute initial = global.getInitialValueAttr();
    // Contents the runtime cannot be given (a resource blob) stay, for the
    // SPIR-V conversion to report.
    if (initial && !isa<UnitAttr, DenseElementsAttr>(initial))
      return false;
    bool copiedIntoKernels =
        global.getConstant() && isa_and_nonnull<DenseElementsAttr>(initial) &&
        type.getRank() == 1 && type.getNumElements() <= maxPrivateElements;
    return !copiedIntoKernels;
  }

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // In module order: the order of a kernel's global parameters.
    std::map<StringRef, unsigned> order;
    SmallVector<memref::GlobalOp> globals;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (needsBuffer(global)) {
        order[global.getSymName()] = globals.size();
        globals.push_back(global);
      }
    if (globals.empty())
      return;

    llvm::SmallBitVector used(globals.size());
    SmallVector<NamedAttribute> kernels;
    WalkResult result = module.walk([&](memref::GetGlobalOp get) {
      auto found = order.find(get.getName());
      if (found == order.end())
        return WalkResult::advance();
      auto kernel = get->getParentOfType<gpu::GPUFuncOp>();
      if (!kernel || !kernel.isKernel()) {
        get.emitOpError("reads @")
            << get.getName()
            << " outside a kernel: on SPIR-V a module global is a buffer each "
               "kernel binds, so the function reading it must be inlined "
               "into its kernels";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();

    for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      // Global index -> the kernel's get_global ops of it.
      std::map<unsigned, SmallVector<memref::GetGlobalOp>> reads;
      kernel.walk([&](memref::GetGlobalOp get) {
        auto found = order.find(get.getName());
        if (found != order.end())
          reads[found->second].push_back(get);
      });
      if (reads.empty())
        continue;
      SmallVector<Attribute> names;
      for (auto &[index, gets] : reads) {
        memref::GlobalOp global = globals[index];
        used.set(index);
        unsigned position = kernel.getNumArguments();
        StringAttr name = global.getSymNameAttr();
        if (failed(kernel.insertArgument(
                position, global.getType(),
                DictionaryAttr::get(
                    context, {NamedAttribute(
                                 StringAttr::get(
                                     context, nabla::kModuleGlobalArgAttrName),
                                 name)}),
                global.getLoc())))
          return signalPassFailure();
        Value buffer = kernel.getArgument(position);
        for (memref::GetGlobalOp get : gets) {
          get.replaceAllUsesWith(buffer);
          get.erase();
        }
        names.push_back(name);
      }
      kernels.push_back(
          NamedAttribute(kernel.getNameAttr(), ArrayAttr::get(context, names)));
    }

    Builder builder(context);
    SmallVector<Attribute> buffers;
    for (auto [index, global] : llvm::enumerate(globals)) {
      if (!used.test(index))
        continue;
      SmallVector<NamedAttribute> fields{
          builder.getNamedAttr("name", global.getSymNameAttr()),
          builder.getNamedAttr("type", TypeAttr::get(global.getType()))};
      if (auto value =
              dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr()))
        fields.push_back(builder.getNamedAttr("value", value));
      if (global.getConstant())
        fields.push_back(
            builder.getNamedAttr("constant", builder.getUnitAttr()));
      buffers.push_back(builder.getDictionaryAttr(fields));
    }
    for (memref::GlobalOp global : globals)
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
    if (buffers.empty())
      return;
    module->setAttr(
        nabla::kModuleGlobalsAttrName,
        builder.getDictionaryAttr(
            {builder.getNamedAttr("buffers", builder.getArrayAttr(buffers)),
             builder.getNamedAttr("kernels",
                                  builder.getDictionaryAttr(kernels))}));
  }
};

} // namespace
