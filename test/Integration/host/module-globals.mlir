// Module globals of a host program on Vulkan (nabla-bind-module-globals): a
// `__device__` counter that two launches and two kernels share (the second
// launch continues where the first stopped, as CUDA's launches of one module
// do), a 2-D table the kernels update, and a constant table too large to copy
// into each kernel. The runtime allocates their buffers when it loads the
// module and binds them at every launch.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// First launch: table[t % 2][t / 2] (1, 4, 2, 5) plus the big table's 0.5,
// the counter at 4 after it; the table was doubled in place and the counter
// kept, so the second launch sees 2, 8, 4, 10 and leaves the counter at 8.
// CHECK: [1.5,  4.5,  2.5,  5.5]
// CHECK: [4]
// CHECK: [2.5,  8.5,  4.5,  10.5]
// CHECK: [8]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" @count : memref<1xi32> = dense<0>
    memref.global "private" @table : memref<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>
    memref.global "private" constant @big : memref<1000xf32> = dense<0.5>
    gpu.func @take(%out: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %one = arith.constant 1 : i32
      %count = memref.get_global @count : memref<1xi32>
      %table = memref.get_global @table : memref<2x3xf32>
      %big = memref.get_global @big : memref<1000xf32>
      %ticket = memref.atomic_rmw addi %one, %count[%c0] : (i32, memref<1xi32>) -> i32
      %row = arith.remui %t, %c2 : index
      %col = arith.divui %t, %c2 : index
      %entry = memref.load %table[%row, %col] : memref<2x3xf32>
      %twice = arith.addf %entry, %entry : f32
      memref.store %twice, %table[%row, %col] : memref<2x3xf32>
      %half = memref.load %big[%t] : memref<1000xf32>
      %r = arith.addf %entry, %half : f32
      memref.store %r, %out[%t] : memref<4xf32>
      gpu.return
    }
    gpu.func @read(%out: memref<1xi32>) kernel {
      %c0 = arith.constant 0 : index
      %count = memref.get_global @count : memref<1xi32>
      %v = memref.load %count[%c0] : memref<1xi32>
      memref.store %v, %out[%c0] : memref<1xi32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %host = memref.alloc() : memref<4xf32>
    %dev = gpu.alloc () : memref<4xf32>
    %cast = memref.cast %host : memref<4xf32> to memref<*xf32>
    %hostCount = memref.alloc() : memref<1xi32>
    %devCount = gpu.alloc () : memref<1xi32>
    %castCount = memref.cast %hostCount : memref<1xi32> to memref<*xi32>
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    scf.for %launch = %c0 to %c2 step %c1 {
      gpu.launch_func @kernels::@take blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%dev : memref<4xf32>)
      gpu.memcpy %host, %dev : memref<4xf32>, memref<4xf32>
      func.call @printMemrefF32(%cast) : (memref<*xf32>) -> ()
      gpu.launch_func @kernels::@read blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%devCount : memref<1xi32>)
      gpu.memcpy %hostCount, %devCount : memref<1xi32>, memref<1xi32>
      func.call @printMemrefI32(%castCount) : (memref<*xi32>) -> ()
    }
    gpu.dealloc %dev : memref<4xf32>
    gpu.dealloc %devCount : memref<1xi32>
    memref.dealloc %host : memref<4xf32>
    memref.dealloc %hostCount : memref<1xi32>
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemrefI32(memref<*xi32>)
}
