// A host program launching a kernel that uses dynamic shared memory with a
// constant dynamic_shared_memory_size, the way upstream's GPU tests write
// it: on Vulkan the size is compiled in from what the launches agree on
// (nabla-annotate-launch-sizes), no pipeline option needed. Launches with
// other sizes than the pipeline option are a compile error.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s
// RUN: not nabla-opt %s --nabla-to-spirv="dynamic-shared-memory=128" 2>&1 | FileCheck %s --check-prefix=MISMATCH

// Each block of 4 reverses its slice through the dynamic shared memory.
// CHECK: [3,  2,  1,  0,  7,  6,  5,  4]
// MISMATCH: error: 'gpu.dynamic_shared_memory' op is compiled for 128 bytes of dynamic shared memory ({{.*}}), but every launch of @reverse passes 16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @reverse(%X: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_dim x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tile = memref.view %raw[%c0][%b] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %x = memref.load %X[%i] : memref<8xf32>
      memref.store %x, %tile[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %last = arith.subi %b, %c1 : index
      %r = arith.subi %last, %t : index
      %y = memref.load %tile[%r] : memref<?xf32, #gpu.address_space<workgroup>>
      memref.store %y, %X[%i] : memref<8xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %bytes = arith.constant 16 : i32
    %host = memref.alloc() : memref<8xf32>
    scf.for %i = %c0 to %c8 step %c1 {
      %k = arith.index_cast %i : index to i32
      %v = arith.sitofp %k : i32 to f32
      memref.store %v, %host[%i] : memref<8xf32>
    }
    %dev = gpu.alloc () : memref<8xf32>
    gpu.memcpy %dev, %host : memref<8xf32>, memref<8xf32>
    gpu.launch_func @kernels::@reverse blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) dynamic_shared_memory_size %bytes args(%dev : memref<8xf32>)
    gpu.memcpy %host, %dev : memref<8xf32>, memref<8xf32>
    %cast = memref.cast %host : memref<8xf32> to memref<*xf32>
    call @printMemrefF32(%cast) : (memref<*xf32>) -> ()
    gpu.dealloc %dev : memref<8xf32>
    memref.dealloc %host : memref<8xf32>
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}
