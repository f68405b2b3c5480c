//===- ROCDLSerializer.cpp - gpu.modules for AMD GPUs, with IR hooks ------===//
//
// The same serialization as upstream's #rocdl.target (link the device
// libraries, optimize, translate to ISA, assemble, link with ld.lld), with
// gpu::TargetOptions' linked and optimized LLVM IR callbacks run where NVVM's
// serializer runs them: after linking, after optimizing.
//
//===----------------------------------------------------------------------===//

#include "ROCDLSerializer.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/IR/Module.h"

using namespace mlir;

namespace {

class HookedSerializer : public ROCDL::SerializeGPUModuleBase {
public:
  HookedSerializer(Operation &module, ROCDL::ROCDLTargetAttr target,
                   const gpu::TargetOptions &options)
      : SerializeGPUModuleBase(module, target, options), options(options) {}

protected:
  void handleModulePostLink(llvm::Module &module) override {
    SerializeGPUModuleBase::handleModulePostLink(module);
    if (auto linked = options.getLinkedLlvmIRCallback())
      linked(module);
  }

  LogicalResult optimizeModule(llvm::Module &module, int level) override {
    if (failed(SerializeGPUModuleBase::optimizeModule(module, level)))
      return failure();
    if (auto optimized = options.getOptimizedLlvmIRCallback())
      optimized(module);
    return success();
  }

  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &module) override {
    return moduleToObjectImpl(options, module);
  }

private:
  const gpu::TargetOptions &options;
};

} // namespace

bool nabla::hasOnlyROCDLTargets(gpu::GPUModuleOp module) {
  ArrayAttr targets = module.getTargetsAttr();
  return targets && !targets.empty() &&
         llvm::all_of(targets, llvm::IsaPred<ROCDL::ROCDLTargetAttr>);
}

LogicalResult nabla::serializeROCDLModule(gpu::GPUModuleOp module,
                                          const gpu::TargetOptions &options) {
  SmallVector<Attribute> objects;
  for (Attribute attr : module.getTargetsAttr()) {
    auto target = cast<ROCDL::ROCDLTargetAttr>(attr);
    HookedSerializer serializer(*module, target, options);
    serializer.init();
    std::optional<SmallVector<char, 0>> bytes = serializer.run();
    if (!bytes)
      return module.emitError("failed to serialize the module for ")
             << target.getChip();
    Attribute object = cast<gpu::TargetAttrInterface>(attr).createObject(
        module, *bytes, options);
    if (!object)
      return module.emitError("failed to create the object for ")
             << target.getChip();
    objects.push_back(object);
  }
  OpBuilder builder(module);
  gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                        /*offloadingHandler=*/nullptr,
                        builder.getArrayAttr(objects));
  module.erase();
  return success();
}
