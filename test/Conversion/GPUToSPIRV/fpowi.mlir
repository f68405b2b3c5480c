// nabla-convert-gpu-to-spirv: math.fpowi with a run-time exponent becomes a
// loop of binary exponentiation (GLSL.std.450's Pow is 32-bit and undefined
// for negative bases; f64 reached it as an invalid op, difftest seed 20003);
// a constant exponent keeps upstream's straight-line products.
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64" | FileCheck %s

// CHECK-LABEL: spirv.func @runtime_exponent_f64
// CHECK-NOT: spirv.GL.Pow
// CHECK: spirv.SLessThan
// CHECK: spirv.mlir.loop
// CHECK: spirv.BitwiseAnd
// CHECK: spirv.FMul %{{.*}} : f64
// CHECK: spirv.ShiftRightLogical
// CHECK: spirv.mlir.merge
// CHECK: spirv.FDiv %{{.*}} : f64
// CHECK: spirv.Select
// CHECK-NOT: spirv.GL.Pow
// CHECK: spirv.Return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @runtime_exponent_f64(%A: memref<?xf64>, %n: i32) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xf64>
      %y = math.fpowi %x, %n : f64, i32
      memref.store %y, %A[%c0] : memref<?xf64>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: spirv.func @runtime_exponent_f32
// CHECK-NOT: spirv.GL.Pow
// CHECK: spirv.mlir.loop
// CHECK: spirv.FMul %{{.*}} : f32
// CHECK-NOT: spirv.GL.Pow
// CHECK: spirv.Return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @runtime_exponent_f32(%A: memref<?xf32>, %n: i64) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xf32>
      %y = math.fpowi %x, %n : f32, i64
      memref.store %y, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: spirv.func @constant_exponent
// CHECK-NOT: spirv.mlir.loop
// CHECK: spirv.FMul
// CHECK-NOT: spirv.mlir.loop
// CHECK: spirv.Return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @constant_exponent(%A: memref<?xf64>) kernel {
      %c0 = arith.constant 0 : index
      %three = arith.constant 3 : i32
      %x = memref.load %A[%c0] : memref<?xf64>
      %y = math.fpowi %x, %three : f64, i32
      memref.store %y, %A[%c0] : memref<?xf64>
      gpu.return
    }
  }
}
