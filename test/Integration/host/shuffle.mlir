// gpu.shuffle whose width is a block dimension read at run time (13, not a
// power of two nor a subgroup size): exchanged through workgroup memory.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// xor 4 within 13 lanes: lanes 9-11 have no source (-1); down 3: the last
// three lanes have none.
// CHECK: [4,  5,  6,  7,  0,  1,  2,  3,  12,  -1,  -1,  -1,  8]
// CHECK: [3,  4,  5,  6,  7,  8,  9,  10,  11,  12,  -1,  -1,  -1]
func.func @main() {
  %xors = memref.alloc() : memref<13xf32>
  %downs = memref.alloc() : memref<13xf32>
  %dynamic = memref.cast %xors : memref<13xf32> to memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %dynamic, %c0 : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %n, %sy = %c1, %sz = %c1) {
    %t = arith.index_cast %tx : index to i32
    %value = arith.sitofp %t : i32 to f32
    %width = arith.index_cast %sx : index to i32
    %four = arith.constant 4 : i32
    %three = arith.constant 3 : i32
    %none = arith.constant -1.0 : f32
    %x, %xvalid = gpu.shuffle xor %value, %four, %width : f32
    %xr = arith.select %xvalid, %x, %none : f32
    memref.store %xr, %xors[%tx] : memref<13xf32>
    %d, %dvalid = gpu.shuffle down %value, %three, %width : f32
    %dr = arith.select %dvalid, %d, %none : f32
    memref.store %dr, %downs[%tx] : memref<13xf32>
    gpu.terminator
  }
  %xors_any = memref.cast %xors : memref<13xf32> to memref<*xf32>
  %downs_any = memref.cast %downs : memref<13xf32> to memref<*xf32>
  call @printMemrefF32(%xors_any) : (memref<*xf32>) -> ()
  call @printMemrefF32(%downs_any) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>)
