// What a host program leaves on the heap and on the device when it returns:
// memref.alloc (malloc), an aligned memref.alloc (aligned_alloc) and
// memref.realloc (malloc, copy, free) that are never freed, one freed, a
// gpu.alloc never deallocated and a stream (gpu.wait async) never waited.
// nabla-run frees the program's blocks and closes the device after the
// program (tools/nabla-run/ProgramHeap.h, nabla_mgpu_shutdown):
// scripts/sanitize.sh runs this under LeakSanitizer and the Khronos
// validation layer, which must both stay silent.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: [7,  7,  7,  7]
// CHECK: [7,  7,  7,  7,  0,  0]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0 : i32
  %leaked = memref.alloc() : memref<4xi32>
  %aligned = memref.alloc() {alignment = 64} : memref<16xi32>
  %freed = memref.alloc() : memref<8xi32>
  memref.dealloc %freed : memref<8xi32>
  %device = gpu.alloc(%c4) : memref<?xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %seven = arith.constant 7 : i32
    memref.store %seven, %leaked[%tx] : memref<4xi32>
    memref.store %seven, %aligned[%tx] : memref<16xi32>
    memref.store %seven, %device[%tx] : memref<?xi32>
    gpu.terminator
  }
  %dynamic = memref.alloc(%c4) : memref<?xi32>
  gpu.memcpy %dynamic, %device : memref<?xi32>, memref<?xi32>
  %grown = memref.realloc %dynamic(%c6) : memref<?xi32> to memref<?xi32>
  memref.store %zero, %grown[%c4] : memref<?xi32>
  %c5 = arith.constant 5 : index
  memref.store %zero, %grown[%c5] : memref<?xi32>
  %leaked_any = memref.cast %leaked : memref<4xi32> to memref<*xi32>
  call @printMemrefI32(%leaked_any) : (memref<*xi32>) -> ()
  %grown_any = memref.cast %grown : memref<?xi32> to memref<*xi32>
  call @printMemrefI32(%grown_any) : (memref<*xi32>) -> ()
  %pending = gpu.wait async
  return
}

func.func private @printMemrefI32(memref<*xi32>)
