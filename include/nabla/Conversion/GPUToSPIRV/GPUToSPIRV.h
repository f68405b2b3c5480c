//===- GPUToSPIRV.h - Nabla's additions to GPU-to-SPIR-V --------*- C++ -*-===//
//
// Patterns Nabla adds to the upstream GPU/memref-to-SPIR-V conversions, and
// the memory-space mapping its pipelines use.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_CONVERSION_GPUTOSPIRV_GPUTOSPIRV_H
#define NABLA_CONVERSION_GPUTOSPIRV_GPUTOSPIRV_H

#include "mlir/Dialect/SPIRV/IR/SPIRVEnums.h"
#include "mlir/IR/Attributes.h"

#include <optional>

namespace mlir {
class Operation;
class RewritePatternSet;
class SPIRVTypeConverter;
} // namespace mlir

namespace nabla {

/// Adds the lowering of `memref.atomic_rmw addf` (f32/f64): to
/// `spirv.EXT.AtomicFAdd` where the target environment allows it, else to a
/// compare-exchange loop on the value's bit pattern.
void populateAtomicRMWFloatToSPIRVPatterns(
    const mlir::SPIRVTypeConverter &typeConverter,
    mlir::RewritePatternSet &patterns);

/// Storage class of a memref memory space in Nabla's Vulkan ABI: default →
/// StorageBuffer, gpu workgroup → Workgroup, gpu private → Function, plus the
/// upstream numeric Vulkan mapping.
std::optional<mlir::spirv::StorageClass>
mapMemorySpaceToStorageClass(mlir::Attribute memorySpace);

/// Replaces each result of an `scf.for` under `root` that may run zero times
/// by `select(lb < ub, result, init)`: upstream's SCF-to-SPIR-V lowering
/// returns loop results through variables only the body writes, so without
/// this a zero-trip loop yields garbage instead of its init values.
void selectInitsOfZeroTripLoops(mlir::Operation *root);

} // namespace nabla

#endif // NABLA_CONVERSION_GPUTOSPIRV_GPUTOSPIRV_H
