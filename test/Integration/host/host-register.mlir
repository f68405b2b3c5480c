// gpu.host_register of memrefs of rank 1 and 2 (MLIR 22 registers unranked
// memrefs only), and a plain host memref nothing registered: the kernel's
// writes to all three are visible to the host after the launch.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: [0,  1,  2,  3,  4]
// CHECK: {{\[}}[10,  11,  12,  13,  14],
// CHECK-NEXT: [20,  21,  22,  23,  24]]
// CHECK: [5,  5,  5,  5,  5]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %ranked = memref.alloc() : memref<5xi32>
  %matrix = memref.alloc() : memref<2x5xi32>
  %plain = memref.alloc() : memref<5xi32>
  %ranked_any = memref.cast %ranked : memref<5xi32> to memref<*xi32>
  gpu.host_register %ranked_any : memref<*xi32>
  %matrix_any = memref.cast %matrix : memref<2x5xi32> to memref<*xi32>
  gpu.host_register %matrix_any : memref<*xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c5, %sy = %c1, %sz = %c1) {
    %t = arith.index_cast %tx : index to i32
    %ten = arith.constant 10 : i32
    %five = arith.constant 5 : i32
    %t10 = arith.addi %t, %ten : i32
    memref.store %t, %ranked[%tx] : memref<5xi32>
    %t20 = arith.addi %t10, %ten : i32
    memref.store %t10, %matrix[%c0, %tx] : memref<2x5xi32>
    memref.store %t20, %matrix[%c1, %tx] : memref<2x5xi32>
    memref.store %five, %plain[%tx] : memref<5xi32>
    gpu.terminator
  }
  %plain_any = memref.cast %plain : memref<5xi32> to memref<*xi32>
  call @printMemrefI32(%ranked_any) : (memref<*xi32>) -> ()
  call @printMemrefI32(%matrix_any) : (memref<*xi32>) -> ()
  call @printMemrefI32(%plain_any) : (memref<*xi32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
