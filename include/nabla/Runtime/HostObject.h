//===- HostObject.h - SPIR-V objects carrying their launch ABI --*- C++ -*-===//
//
// The object that host programs embed for a SPIR-V gpu.binary (written by
// the nabla-wrap-host-objects pass, read by libnabla_mgpu.so): Vulkan binds
// kernel arguments as descriptors, so `mgpuLaunchKernel`, which receives the
// flat LLVM arguments of a launch (memref descriptor fields and scalars),
// needs each kernel's parameter list to rebuild its bindings.
//
//   offset 0   8 bytes  magic "NBLAHOST"
//   offset 8   u32 LE   format version (1)
//   offset 12  u32 LE   byte length N of the JSON description
//   offset 16  N bytes  {"kernels": [{"name": K, "params": [P...]}...]}
//              zero bytes up to a multiple of 4
//   then       the SPIR-V module's words, to the end of the object
//
// A parameter P is {"kind": "buffer", "element": T, "shape": [E...]} (E is
// -1 for a dynamic extent; "layout": "strided" when the memref type has a
// static non-identity layout, which the kernel applies itself to the buffer
// from the descriptor's aligned pointer on) or {"kind": "scalar", "type": T},
// T an MLIR type name (f32, i8, index...). A kernel that calls gpu.printf has
// "printf": true and one more binding after all others, the printf buffer
// (nabla-lower-printf-to-buffer); the description then has "printf":
// {"formats": [F...], "capacity": N}: the format strings records refer to by
// index, and the buffer's words of records (plus the counter word 0). A
// module whose globals the loader keeps in buffers (nabla-bind-module-globals)
// has "module_globals" (nabla/Support/ModuleGlobals.h): the globals with
// their initial contents, and per kernel the globals it binds after its size
// bindings and before its printf buffer. The
// bindings follow docs/Targets.md: binding k for parameter k, then one i32 size
// binding per dynamic extent of each dynamic memref of rank >= 2, in parameter
// order.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_HOSTOBJECT_H
#define NABLA_RUNTIME_HOSTOBJECT_H

#include <cstddef>
#include <cstdint>

namespace nabla::runtime {

inline constexpr char kHostObjectMagic[8] = {'N', 'B', 'L', 'A',
                                             'H', 'O', 'S', 'T'};
inline constexpr uint32_t kHostObjectVersion = 1;
inline constexpr size_t kHostObjectHeaderBytes = 16;

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_HOSTOBJECT_H
