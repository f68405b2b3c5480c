// arith.*_extended and vector ops inside a kernel: the high and low words of
// 32-bit products, carries of additions, and a vector<4xf32> built, scaled,
// reduced and split per thread.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// mulsi_extended(t * 1e9 - 1, 7): low and high words; addui_extended(t *
// 2^30 - 2^31, 2^31): sum and carry (values checked against Python).
// CHECK: {{\[}}[-7,   -1,   0,   1],
// CHECK-NEXT: [-1589934599,   1,   1073741824,   1],
// CHECK-NEXT: [1115098105,   3,   -2147483648,   0],
// CHECK-NEXT: [-474836487,   -3,   -1073741824,   0]]
// Vector of (t, t + 1, t + 2, t + 3) * 2: its sum and its lane 3.
// CHECK: {{\[}}[12,   6],
// CHECK-NEXT: [20,   8],
// CHECK-NEXT: [28,   10],
// CHECK-NEXT: [36,   12]]
func.func @main() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %ints = memref.alloc() : memref<4x4xi32>
  %floats = memref.alloc() : memref<4x2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %t = arith.index_cast %tx : index to i32
    %billion = arith.constant 1000000000 : i32
    %one = arith.constant 1 : i32
    %seven = arith.constant 7 : i32
    %p0 = arith.muli %t, %billion : i32
    %p = arith.subi %p0, %one : i32
    %low, %high = arith.mulsi_extended %p, %seven : i32
    %quarter = arith.constant 1073741824 : i32
    %half = arith.constant -2147483648 : i32
    %q0 = arith.muli %t, %quarter : i32
    %q = arith.addi %q0, %half : i32
    %sum, %carry = arith.addui_extended %q, %half : i32, i1
    %carry32 = arith.extui %carry : i1 to i32
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    memref.store %low, %ints[%tx, %c0] : memref<4x4xi32>
    memref.store %high, %ints[%tx, %c1] : memref<4x4xi32>
    memref.store %sum, %ints[%tx, %c2] : memref<4x4xi32>
    memref.store %carry32, %ints[%tx, %c3] : memref<4x4xi32>

    %tf = arith.sitofp %t : i32 to f32
    %base = vector.broadcast %tf : f32 to vector<4xf32>
    %steps = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : vector<4xf32>
    %two = arith.constant dense<2.0> : vector<4xf32>
    %v0 = arith.addf %base, %steps : vector<4xf32>
    %v = arith.mulf %v0, %two : vector<4xf32>
    %total = vector.reduction <add>, %v : vector<4xf32> into f32
    %last = vector.extract %v[3] : f32 from vector<4xf32>
    memref.store %total, %floats[%tx, %c0] : memref<4x2xf32>
    memref.store %last, %floats[%tx, %c1] : memref<4x2xf32>
    gpu.terminator
  }
  %ints_any = memref.cast %ints : memref<4x4xi32> to memref<*xi32>
  %floats_any = memref.cast %floats : memref<4x2xf32> to memref<*xf32>
  call @printMemrefI32(%ints_any) : (memref<*xi32>) -> ()
  call @printMemrefF32(%floats_any) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)
