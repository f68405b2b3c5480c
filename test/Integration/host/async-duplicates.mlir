// async.execute naming a dependency token and an async value twice (the join
// of async.mlir as `[%t1, %t2, %t1]` and `%f1` twice): upstream's
// async-to-async-runtime crashed on either (found by fuzzing the spirv
// pipeline); the host lowering keeps each once and the program runs.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -O0 -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_async_runtime,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: [126, 126]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %count = arith.constant 2 : index

  %h0 = memref.alloc(%count) : memref<?xi32>
  %h0_unranked = memref.cast %h0 : memref<?xi32> to memref<*xi32>
  gpu.host_register %h0_unranked : memref<*xi32>
  %v0 = arith.constant 42 : i32
  memref.store %v0, %h0[%c0] : memref<?xi32>
  memref.store %v0, %h0[%c1] : memref<?xi32>

  // Copy h0 to b0 on the device.
  %t0, %f0 = async.execute () -> !async.value<memref<?xi32>> {
    %b0 = gpu.alloc(%count) : memref<?xi32>
    gpu.memcpy %b0, %h0 : memref<?xi32>, memref<?xi32>
    async.yield %b0 : memref<?xi32>
  }
  // Copy b0 to b1 and b2 (fork).
  %t1, %f1 = async.execute [%t0] (
    %f0 as %b0 : !async.value<memref<?xi32>>
  ) -> !async.value<memref<?xi32>> {
    %b1 = gpu.alloc(%count) : memref<?xi32>
    gpu.memcpy %b1, %b0 : memref<?xi32>, memref<?xi32>
    async.yield %b1 : memref<?xi32>
  }
  %t2, %f2 = async.execute [%t0] (
    %f0 as %b0 : !async.value<memref<?xi32>>
  ) -> !async.value<memref<?xi32>> {
    %b2 = gpu.alloc(%count) : memref<?xi32>
    gpu.memcpy %b2, %b0 : memref<?xi32>, memref<?xi32>
    async.yield %b2 : memref<?xi32>
  }
  // h0 = b1 + b2 + b1 (join), naming t1 and f1 twice.
  %t3 = async.execute [%t1, %t2, %t1] (
    %f1 as %b1 : !async.value<memref<?xi32>>,
    %f2 as %b2 : !async.value<memref<?xi32>>,
    %f1 as %b3 : !async.value<memref<?xi32>>
  ) {
    gpu.launch blocks(%bx, %by, %bz) in (%grid_x = %c1, %grid_y = %c1, %grid_z = %c1)
               threads(%tx, %ty, %tz) in (%block_x = %count, %block_y = %c1, %block_z = %c1) {
      %v1 = memref.load %b1[%tx] : memref<?xi32>
      %v2 = memref.load %b2[%tx] : memref<?xi32>
      %v3 = memref.load %b3[%tx] : memref<?xi32>
      %sum0 = arith.addi %v1, %v2 : i32
      %sum = arith.addi %sum0, %v3 : i32
      memref.store %sum, %h0[%tx] : memref<?xi32>
      gpu.terminator
    }
    async.yield
  }
  async.await %t3 : !async.token
  call @printMemrefI32(%h0_unranked) : (memref<*xi32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
