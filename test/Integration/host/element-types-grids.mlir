// i8, i32, f32 and f64 buffers, a 2-D grid of 1-D blocks and a 3-D grid of
// 3-D blocks: every element records which block and thread wrote it.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// 2-D grid (3 x 2 blocks of 4 threads): i8 = 10 * by + bx, f64 = tx / 2.
// CHECK: {{\[}}[0,   0,   0,   0,   1,   1,   1,   1,   2,   2,   2,   2],
// CHECK-NEXT: [10,   10,   10,   10,   11,   11,   11,   11,   12,   12,   12,   12]]
// CHECK: {{\[}}[0,   0.5,   1,   1.5,   0,   0.5,   1,   1.5,   0,   0.5,   1,   1.5],
// 3-D grid (2 x 2 x 2 blocks of 1 x 2 x 2 threads): i32 = linear block id,
// f32 = linear thread id.
// CHECK: [0,  0,  0,  0,  1,  1,  1,  1,  2,  2,  2,  2,  3,  3,  3,  3,  4,  4,  4,  4,  5,  5,  5,  5,  6,  6,  6,  6,  7,  7,  7,  7]
// CHECK: [0,  1,  2,  3,  0,  1,  2,  3,  0,  1,  2,  3,  0,  1,  2,  3,  0,  1,  2,  3,  0,  1,  2,  3,  0,  1,  2,  3,  0,  1,  2,  3]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %bytes = memref.alloc() : memref<2x12xi8>
  %doubles = memref.alloc() : memref<2x12xf64>
  %ints = memref.alloc() : memref<32xi32>
  %floats = memref.alloc() : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c2, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %col0 = arith.muli %bx, %sx : index
    %col = arith.addi %col0, %tx : index
    %row = arith.index_cast %by : index to i8
    %ten = arith.constant 10 : i8
    %high = arith.muli %row, %ten : i8
    %low = arith.index_cast %bx : index to i8
    %b = arith.addi %high, %low : i8
    memref.store %b, %bytes[%by, %col] : memref<2x12xi8>
    %t = arith.index_cast %tx : index to i32
    %tf = arith.sitofp %t : i32 to f64
    %half = arith.constant 0.5 : f64
    %d = arith.mulf %tf, %half : f64
    memref.store %d, %doubles[%by, %col] : memref<2x12xf64>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c2, %gz = %c2)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c2, %sz = %c2) {
    %b0 = arith.muli %bz, %gy : index
    %b1 = arith.addi %b0, %by : index
    %b2 = arith.muli %b1, %gx : index
    %block = arith.addi %b2, %bx : index
    %t0 = arith.muli %tz, %sy : index
    %t1 = arith.addi %t0, %ty : index
    %t2 = arith.muli %t1, %sx : index
    %thread = arith.addi %t2, %tx : index
    %base = arith.muli %block, %c4 : index
    %i = arith.addi %base, %thread : index
    %bi = arith.index_cast %block : index to i32
    memref.store %bi, %ints[%i] : memref<32xi32>
    %ti = arith.index_cast %thread : index to i32
    %tf = arith.sitofp %ti : i32 to f32
    memref.store %tf, %floats[%i] : memref<32xf32>
    gpu.terminator
  }
  %bytes_wide = memref.alloc() : memref<2x12xi32>
  scf.for %r = %c0 to %c2 step %c1 {
    scf.for %k = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c3 step %c1 {
        %col0 = arith.muli %j, %c4 : index
        %col = arith.addi %col0, %k : index
        %v = memref.load %bytes[%r, %col] : memref<2x12xi8>
        %w = arith.extsi %v : i8 to i32
        memref.store %w, %bytes_wide[%r, %col] : memref<2x12xi32>
      }
    }
  }
  %bytes_any = memref.cast %bytes_wide : memref<2x12xi32> to memref<*xi32>
  %doubles_any = memref.cast %doubles : memref<2x12xf64> to memref<*xf64>
  %ints_any = memref.cast %ints : memref<32xi32> to memref<*xi32>
  %floats_any = memref.cast %floats : memref<32xf32> to memref<*xf32>
  call @printMemrefI32(%bytes_any) : (memref<*xi32>) -> ()
  call @printMemrefF64(%doubles_any) : (memref<*xf64>) -> ()
  call @printMemrefI32(%ints_any) : (memref<*xi32>) -> ()
  call @printMemrefF32(%floats_any) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefF64(memref<*xf64>)
