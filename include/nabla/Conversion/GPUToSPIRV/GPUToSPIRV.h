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
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir {
class Operation;
namespace gpu {
class GPUFuncOp;
class GPUModuleOp;
} // namespace gpu
namespace spirv {
class ModuleOp;
} // namespace spirv
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

/// Replaces the typed views of gpu.dynamic_shared_memory in `module` by
/// workgroup allocations of `bytes` (DynamicSharedMemory.cpp); a located
/// error naming `optionName` when a kernel uses it and `bytes` is negative
/// (not given).
mlir::LogicalResult
materializeDynamicSharedMemory(mlir::gpu::GPUModuleOp module, int64_t bytes,
                               llvm::StringRef optionName);

/// i1 → index casts as selects (BooleanIndexCasts.cpp): SPIR-V booleans are
/// not integers and upstream lowers no such cast.
void populateBooleanIndexCastPatterns(mlir::RewritePatternSet &patterns);

/// Before the conversion: float atomics the target environment cannot do
/// natively (adds without SPV_EXT_shader_atomic_float_add or `always`, every
/// min/max, exchanges; threadgroup adds on Metal) become compare-exchange
/// loops on integer views of their buffers (AtomicsToSPIRV.cpp).
mlir::LogicalResult emulateFloatAtomicAdd(mlir::gpu::GPUModuleOp module,
                                          bool always, bool metal);

/// After emulateFloatAtomicAdd: buffers of 8- or 16-bit integers that
/// atomics update (bf16 and f16 bits) become buffers of 32-bit words, their
/// atomics compare-exchange loops on the word holding the element
/// (AtomicsToSPIRV.cpp); Vulkan has no narrower atomics.
mlir::LogicalResult emulateNarrowAtomics(mlir::gpu::GPUModuleOp module);

/// nabla.subgroup_barrier (__syncwarp) to OpControlBarrier: Subgroup scope
/// when the device's subgroups hold a 32-lane warp, else Workgroup scope
/// (SubgroupBarrier.cpp).
void populateSubgroupBarrierToSPIRVPatterns(
    const mlir::SPIRVTypeConverter &typeConverter,
    mlir::RewritePatternSet &patterns, unsigned subgroupSize);

/// math.ctpop and math.cttz (i32) to SPIR-V, which upstream does not lower
/// (BitCounts.cpp).
void populateBitCountToSPIRVPatterns(
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

/// Expands scalar `math.fpowi` with a non-constant exponent into a loop of
/// binary exponentiation (compiler-rt's __powidf2, bit for bit): GLSL.std.450's
/// Pow is 32-bit and undefined for negative bases.
void populateExpandFPowIPatterns(mlir::RewritePatternSet &patterns);

/// Rewrites `cmpi(extsi(x), C)` with C in x's signed range into a
/// comparison of x (every predicate carries over); lavapipe miscompiles the
/// wide form.
void populateNarrowComparisonPatterns(mlir::RewritePatternSet &patterns);

/// Rewrites integer `arith.remsi` into remui of absolute values with the
/// sign from a comparison: upstream's SPIR-V lowering gets the sign wrong
/// for the minimum value.
void populateExactSignedRemainderPatterns(mlir::RewritePatternSet &patterns);

/// Expands f32 `math.atan` and `math.atan2` into arithmetic within ~3 ulp:
/// lavapipe's GLSL.std.450 Atan and upstream's atan2 approximation are off
/// by ~350 ulp.
void populateAccurateArctangentPatterns(mlir::RewritePatternSet &patterns);

/// Exchanges gpu.shuffle ops of `kernel` whose constant width exceeds
/// `subgroupSize` through a workgroup scratch attribution (two barriers
/// each; every thread of the block must reach them). `workgroupSize` is the
/// kernel's block size. Errors on values wider than 64 bits.
mlir::LogicalResult emulateWideShuffles(mlir::gpu::GPUFuncOp kernel,
                                        unsigned subgroupSize,
                                        llvm::ArrayRef<int32_t> workgroupSize);

/// The SpecIds of the x, y and z workgroup size of kernels compiled without a
/// known size (specializeWorkgroupSize); the runtime sets them per launch.
inline constexpr unsigned kWorkgroupSizeSpecId = 100;

/// Gives kernels of `module` whose workgroup size is decided at launch (no
/// LocalSize) their size through specialization constants: the
/// WorkgroupSize built-in they load becomes a spirv.SpecConstantComposite of
/// three i32 specialization constants (SpecIds kWorkgroupSizeSpecId + 0, 1,
/// 2, default 1) named `nabla_workgroup_size`. Vulkan takes the size from the
/// composite once it is decorated BuiltIn WorkgroupSize, which MLIR's
/// serializer cannot express: nabla-spirv-to-binary adds that decoration.
/// Does nothing when every kernel has a fixed workgroup size.
void specializeWorkgroupSize(mlir::spirv::ModuleOp module);

/// Gives every nested spirv.mlir.selection and spirv.mlir.loop of `module` a
/// block of its own (split before and after it): MLIR's serializer names the
/// wrong incoming block in an OpPhi whose branch or loop entry shares a
/// block with a construct or sits in a split loop header (invalid SPIR-V from
/// clang's loops).
void isolateStructuredConstructs(mlir::spirv::ModuleOp module);

} // namespace nabla

#endif // NABLA_CONVERSION_GPUTOSPIRV_GPUTOSPIRV_H
