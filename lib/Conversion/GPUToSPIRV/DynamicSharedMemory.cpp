//===- DynamicSharedMemory.cpp - Launch-sized workgroup memory on SPIR-V --===//
//
// CUDA's `extern __shared__` (gpu.dynamic_shared_memory, viewed as one
// element type) takes its size from the launch. Vulkan and Metal compile it
// into the shader: nabla-run compiles for each launch anyway, and
// nabla-compile takes the size (`--dynamic-shared-memory=BYTES`, recorded in
// the manifest; nabla-launch checks the launch asks for it). Each typed view
// at offset 0 becomes a workgroup allocation of BYTES / sizeof(T) elements
// that the view's loads, stores and atomics use; several element types or other
// offsets are a located error (logical SPIR-V cannot reinterpret memory), as
// is a kernel using the memory without a size.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "nabla/Dialect/Nabla/IR/NablaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

/// Whether `shift` is the launch's dynamic shared bytes (the parameter a
/// gradient kernel gets, marked nabla.dynamic_shared_memory_bytes): the
/// view is the shadow region after the primal's, which becomes an array of
/// its own like the primal's.
static bool isShadowShift(Value shift) {
  if (auto cast = shift.getDefiningOp<arith::IndexCastUIOp>())
    shift = cast.getIn();
  auto argument = dyn_cast<BlockArgument>(shift);
  if (!argument)
    return false;
  auto func = dyn_cast<gpu::GPUFuncOp>(argument.getOwner()->getParentOp());
  return func && argument.getOwner()->isEntryBlock() &&
         func.getArgAttr(argument.getArgNumber(),
                         nabla::kDynamicSharedBytesAttrName);
}

LogicalResult nabla::materializeDynamicSharedMemory(gpu::GPUModuleOp module,
                                                    int64_t optionBytes,
                                                    StringRef optionName) {
  SmallVector<gpu::DynamicSharedMemoryOp> regions;
  module.walk([&](gpu::DynamicSharedMemoryOp op) { regions.push_back(op); });
  for (gpu::DynamicSharedMemoryOp region : regions) {
    // A host program's launches that agree on a constant size give it
    // (nabla-annotate-launch-sizes); it must match the option when both are.
    int64_t bytes = optionBytes;
    if (auto kernel = region->getParentOfType<gpu::GPUFuncOp>())
      if (auto launched = kernel->getAttrOfType<IntegerAttr>(
              "nabla.dynamic_shared_memory")) {
        if (optionBytes >= 0 && launched.getInt() != optionBytes)
          return region.emitOpError("is compiled for ")
                 << optionBytes << " bytes of dynamic shared memory ("
                 << optionName << "), but every launch of @"
                 << kernel.getName() << " passes " << launched.getInt();
        bytes = launched.getInt();
      }
    if (bytes < 0)
      return region.emitOpError(
                 "uses dynamic shared memory (`extern __shared__`), whose "
                 "size SPIR-V and Metal fix at compile time: give the "
                 "launch's size with ")
             << optionName;
    Type element;
    SmallVector<memref::ViewOp> views;
    for (Operation *user : region->getUsers()) {
      auto view = dyn_cast<memref::ViewOp>(user);
      APInt offset;
      if (!view || view.getType().getRank() != 1 ||
          !((matchPattern(view.getByteShift(), m_ConstantInt(&offset)) &&
             offset.isZero()) ||
            isShadowShift(view.getByteShift())))
        return user->emitOpError(
            "uses dynamic shared memory other than as one typed array from "
            "its start, which SPIR-V and Metal cannot express");
      Type viewElement = view.getType().getElementType();
      if (element && element != viewElement)
        return user->emitOpError("views dynamic shared memory as ")
               << viewElement << " and as " << element
               << ", which SPIR-V and Metal cannot express (one type only)";
      element = viewElement;
      views.push_back(view);
    }
    for (memref::ViewOp view : views) {
      MemRefType type = view.getType();
      int64_t elementBytes =
          std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      int64_t count = std::max<int64_t>(1, bytes / elementBytes);
      OpBuilder builder(view);
      auto staticType =
          MemRefType::get({count}, type.getElementType(),
                          MemRefLayoutAttrInterface(), type.getMemorySpace());
      Value storage =
          memref::AllocOp::create(builder, view.getLoc(), staticType);
      // Element accesses take the static buffer itself (a cast of
      // workgroup memory has no SPIR-V lowering); anything else a cast.
      Value cast;
      for (OpOperand &use : llvm::make_early_inc_range(view->getUses())) {
        if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
                memref::GenericAtomicRMWOp>(use.getOwner())) {
          use.set(storage);
          continue;
        }
        if (!cast)
          cast = memref::CastOp::create(builder, view.getLoc(), type, storage);
        use.set(cast);
      }
      view.erase();
    }
    region.erase();
  }
  return success();
}
