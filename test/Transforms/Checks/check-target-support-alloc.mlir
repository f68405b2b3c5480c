// nabla-check-target-support: a heap allocation left in a kernel (run-time
// size, or too large for private memory) is a located error on the targets
// without a device heap, naming the fix; NVVM allocates it (device malloc).
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support=target=spirv
// RUN: not nabla-opt %s -split-input-file --nabla-check-target-support=target=metal 2>&1 | FileCheck %s --check-prefix=METAL
// RUN: nabla-opt %s -split-input-file '--nabla-check-target-support=target=nvvm chip=sm_80' -o /dev/null
// nabla-compile: the static one becomes private memory, the dynamic one is
// reported at its line.
// RUN: %expect_exit 1 nabla-compile %s --target=spirv --block=64 -o %t.spirv 2>&1 | FileCheck %s --check-prefix=COMPILE
// METAL: check-target-support-alloc.mlir:[[# @LINE + 9]]:12: error: 'memref.alloc' op allocates device memory of run-time size, which the metal target cannot
// COMPILE: check-target-support-alloc.mlir:[[# @LINE + 8]]:12: error: 'memref.alloc' op allocates device memory of run-time size, which the spirv target cannot: Vulkan and Metal kernels have no device heap
// COMPILE-NOT: error

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%X: memref<?xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{'memref.alloc' op allocates device memory of run-time size, which the spirv target cannot: Vulkan and Metal kernels have no device heap. Give it a static shape of at most 64 KiB used only in its function (it becomes per-thread private memory), or pass a buffer}}
      %p = memref.alloc(%n) : memref<?xf32>
      %x = memref.load %X[%c0] : memref<?xf32>
      memref.store %x, %p[%c0] : memref<?xf32>
      // Workgroup memory is the targets' own (a Workgroup variable).
      %w = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
      // Static: private memory under nabla-compile; alone, an error.
      // expected-error @below {{'memref.alloc' op allocates device memory, which the spirv target cannot}}
      %s = memref.alloc() : memref<4xf32>
      memref.store %x, %s[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
