// gpu.all_reduce with a custom combiner region (here a bitwise and of
// integers, and a max through arith.select of floats).
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: [0, 2]
// CHECK: [16, 11]
memref.global "private" constant @values : memref<2x6xi32> =
    dense<[[0, 1, 2, 4, 8, 16], [2, 3, 6, 7, 10, 11]]>

func.func @main() {
  %data = memref.alloc() : memref<2x6xi32>
  %ands = memref.alloc() : memref<2xi32>
  %maxes = memref.alloc() : memref<2xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %init = memref.get_global @values : memref<2x6xi32>
  memref.copy %init, %data : memref<2x6xi32> to memref<2x6xi32>
  %data_any = memref.cast %data : memref<2x6xi32> to memref<*xi32>
  %ands_any = memref.cast %ands : memref<2xi32> to memref<*xi32>
  %maxes_any = memref.cast %maxes : memref<2xf32> to memref<*xf32>
  gpu.host_register %data_any : memref<*xi32>
  gpu.host_register %ands_any : memref<*xi32>
  gpu.host_register %maxes_any : memref<*xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%grid_x = %c2, %grid_y = %c1, %grid_z = %c1)
             threads(%tx, %ty, %tz) in (%block_x = %c6, %block_y = %c1, %block_z = %c1) {
    %val = memref.load %data[%bx, %tx] : memref<2x6xi32>
    %and = gpu.all_reduce %val uniform {
    ^bb(%lhs : i32, %rhs : i32):
      %r = arith.andi %lhs, %rhs : i32
      "gpu.yield"(%r) : (i32) -> ()
    } : (i32) -> (i32)
    %f = arith.sitofp %val : i32 to f32
    %max = gpu.all_reduce %f {
    ^bb(%lhs : f32, %rhs : f32):
      %greater = arith.cmpf ogt, %lhs, %rhs : f32
      %r = arith.select %greater, %lhs, %rhs : f32
      "gpu.yield"(%r) : (f32) -> ()
    } : (f32) -> (f32)
    memref.store %and, %ands[%bx] : memref<2xi32>
    memref.store %max, %maxes[%bx] : memref<2xf32>
    gpu.terminator
  }
  call @printMemrefI32(%ands_any) : (memref<*xi32>) -> ()
  call @printMemrefF32(%maxes_any) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)
