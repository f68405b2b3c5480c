// nabla-convert-gpu-to-spirv: a sign-extended value compared with a constant
// in its own range is compared in its own width (lavapipe miscompiled the
// i64 form); a constant outside the range, or a non-constant, keeps i64.
// RUN: nabla-opt %s --nabla-convert-gpu-to-spirv="workgroup-size=64" | FileCheck %s

// CHECK-LABEL: spirv.func @k
// CHECK-DAG: %[[ZERO:.*]] = spirv.Constant 0 : i32
// CHECK-DAG: %[[BIG:.*]] = spirv.Constant 8589934592 : i64
// CHECK: %[[X:.*]] = spirv.Load "StorageBuffer" %{{.*}} : i32
// CHECK: %[[W:.*]] = spirv.SConvert %[[X]] : i32 to i64
// CHECK: spirv.SLessThan %[[X]], %[[ZERO]] : i32
// CHECK: spirv.SLessThan %[[W]], %[[BIG]] : i64
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%N: memref<?xi32>, %R: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %e = memref.load %N[%c0] : memref<?xi32>
      %w = arith.extsi %e : i32 to i64
      %zero = arith.constant 0 : i64
      %big = arith.constant 8589934592 : i64
      %a = arith.cmpi slt, %w, %zero : i64
      %b = arith.cmpi slt, %w, %big : i64
      %r = arith.xori %a, %b : i1
      %ri = arith.extui %r : i1 to i32
      memref.store %ri, %R[%c0] : memref<?xi32>
      gpu.return
    }
  }
}
