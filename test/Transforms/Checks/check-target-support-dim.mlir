// memref.dim of a kernel's buffer parameter has nothing to lower to on SPIR-V
// and Metal (Vulkan passes a buffer without its size): a located error naming
// the way out, instead of upstream's "failed to legalize" (difftest seed
// 5009). Static extents, subviews and device-function parameters are left to
// fold, multi-dimensional buffers get their sizes as parameters; NVVM and
// ROCDL pass sizes and lower it.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support=target=spirv
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support=target=metal
// RUN: nabla-opt %s -split-input-file --nabla-check-target-support="target=nvvm chip=sm_80" -o /dev/null

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%A: memref<?xi32>, %S: memref<4xi32>, %M: memref<?x?xi32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %m = memref.dim %M, %c0 : memref<?x?xi32>
      // expected-error @below {{'memref.dim' op reads the run-time size of a buffer parameter, which the}}
      %d = memref.dim %A, %c0 : memref<?xi32>
      %e = memref.dim %S, %c0 : memref<4xi32>
      %v = memref.subview %A[0] [%n] [1] : memref<?xi32> to memref<?xi32, strided<[1]>>
      %f = memref.dim %v, %c0 : memref<?xi32, strided<[1]>>
      %w = arith.index_cast %d : index to i32
      memref.store %w, %A[%e] : memref<?xi32>
      memref.store %w, %A[%f] : memref<?xi32>
      memref.store %w, %A[%m] : memref<?xi32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    func.func @size(%A: memref<?xi32>) -> index {
      %c0 = arith.constant 0 : index
      %d = memref.dim %A, %c0 : memref<?xi32>
      return %d : index
    }
    gpu.func @k(%A: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %m = memref.cast %A : memref<?xi32> to memref<?xi32, strided<[1]>>
      // expected-error @below {{'memref.dim' op reads the run-time size of a buffer parameter}}
      %d = memref.dim %m, %c0 : memref<?xi32, strided<[1]>>
      %w = arith.index_cast %d : index to i32
      memref.store %w, %A[%c0] : memref<?xi32>
      gpu.return
    }
  }
}
