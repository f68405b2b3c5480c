// Device memory with explicit async tokens: gpu.alloc, gpu.memcpy
// host->device, device->device and device->host, gpu.memset, a launch that
// waits on a copy, gpu.dealloc, and gpu.wait on several tokens.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: [0,  2,  4,  6,  8,  10]
// CHECK: [7,  7,  7,  7,  7,  7]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %host = memref.alloc() : memref<6xf32>
  %out = memref.alloc() : memref<6xf32>
  %filled = memref.alloc() : memref<6xf32>
  scf.for %i = %c0 to %c6 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %v = arith.sitofp %ii : i32 to f32
    memref.store %v, %host[%i] : memref<6xf32>
  }
  %t0 = gpu.wait async
  %d0, %t1 = gpu.alloc async [%t0] () : memref<6xf32>
  %d1, %t2 = gpu.alloc async [%t0] () : memref<6xf32>
  %t3 = gpu.memcpy async [%t1] %d0, %host : memref<6xf32>, memref<6xf32>
  %t4 = gpu.memcpy async [%t2, %t3] %d1, %d0 : memref<6xf32>, memref<6xf32>
  %t5 = gpu.launch async [%t4] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c6, %sy = %c1, %sz = %c1) {
    %v = memref.load %d1[%tx] : memref<6xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %d1[%tx] : memref<6xf32>
    gpu.terminator
  }
  %t6 = gpu.memcpy async [%t5] %out, %d1 : memref<6xf32>, memref<6xf32>
  %seven = arith.constant 7.0 : f32
  %t7 = gpu.memset async [%t6] %d0, %seven : memref<6xf32>, f32
  %t8 = gpu.memcpy async [%t7] %filled, %d0 : memref<6xf32>, memref<6xf32>
  %t9 = gpu.dealloc async [%t8] %d0 : memref<6xf32>
  %t10 = gpu.dealloc async [%t8] %d1 : memref<6xf32>
  gpu.wait [%t9, %t10]
  %out_any = memref.cast %out : memref<6xf32> to memref<*xf32>
  %filled_any = memref.cast %filled : memref<6xf32> to memref<*xf32>
  call @printMemrefF32(%out_any) : (memref<*xf32>) -> ()
  call @printMemrefF32(%filled_any) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>)
