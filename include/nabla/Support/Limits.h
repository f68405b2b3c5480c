//===- Limits.h - Sizes Nabla accepts, in one place --------------*- C++
//-*-===//
//
// Input beyond these sizes is rejected with a located error before it reaches
// upstream code that would overflow, exhaust memory or hang on it. Each limit
// is far above what a real kernel uses; docs/Reliability.md lists them.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_LIMITS_H
#define NABLA_SUPPORT_LIMITS_H

#include <cstdint>

namespace nabla {

/// Deepest bracket nesting ((), [], {}, <>) accepted in MLIR text: far more
/// than any real module needs, far less than what overflows the parser's
/// stack.
constexpr unsigned kMaxSourceNesting = 256;

/// Largest extent of one workgroup dimension: 1024 threads is the most any
/// target (CUDA, HIP, Vulkan, Metal) runs in one workgroup.
constexpr int64_t kMaxWorkgroupExtent = 1024;

/// Largest number of workgroups in one grid dimension (CUDA's x limit; the
/// device may allow fewer, which the runtime checks).
constexpr int64_t kMaxGridExtent = (int64_t(1) << 31) - 1;

/// Largest statically sized memref (global, workgroup, private buffer) in
/// bytes: offsets into it must fit 32 bits on every target.
constexpr int64_t kMaxStaticBytes = (int64_t(1) << 32) - 1;

/// Largest initialized global in bytes: its contents are materialized as an
/// LLVM or SPIR-V constant in memory.
constexpr int64_t kMaxInitializedBytes = int64_t(1) << 28;

/// Most elements in one vector value: LLVM's back ends scalarize vectors, so
/// a huge one becomes millions of instructions (and hangs instruction
/// selection); SPIR-V allows at most 16.
constexpr int64_t kMaxVectorElements = 1024;

/// Most repeats of one launch (`--repeat`, `nabla.run(repeat=)`): enough for
/// stable medians of microsecond kernels, few enough that a mistyped count
/// does not occupy a device for hours.
constexpr int64_t kMaxLaunchRepeat = 100000;

/// Most bytes of dynamic shared memory one launch asks for (`extern
/// __shared__`, `--dynamic-shared-memory`, `nabla.run(shared_memory=)`): the
/// launch APIs take 32-bit sizes; the device allows far fewer, which the
/// runtime checks.
constexpr int64_t kMaxDynamicSharedMemory = int64_t(1) << 31;

} // namespace nabla

#endif // NABLA_SUPPORT_LIMITS_H
