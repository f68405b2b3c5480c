// nabla-convert-gpu-to-spirv: f64 math.copysign(x, y) becomes
// select(signbit(y), -|x|, |x|) instead of upstream's 64-bit mask-and-or:
// lavapipe (Mesa 22.3.6) miscomputed that (valid) form when x was loaded
// before a barrier and the result fed a min (difftest seed 65774, replayed by
// test_difftest.py). f32 keeps upstream's lowering.
// RUN: nabla-opt %s --nabla-convert-gpu-to-spirv="workgroup-size=64" | FileCheck %s

// CHECK-LABEL: spirv.func @copysign_f64
// CHECK: %[[ABS:.*]] = spirv.GL.FAbs %{{.*}} : f64
// CHECK: %[[NEG:.*]] = spirv.FNegate %[[ABS]] : f64
// CHECK: %[[BITS:.*]] = spirv.Bitcast %{{.*}} : f64 to i64
// CHECK: %[[SIGN:.*]] = spirv.SLessThan %[[BITS]], %{{.*}} : i64
// CHECK: spirv.Select %[[SIGN]], %[[NEG]], %[[ABS]] : i1, f64
// CHECK-NOT: spirv.BitwiseOr %{{.*}} : i64
// CHECK-LABEL: spirv.func @copysign_f32
// CHECK: spirv.BitwiseOr %{{.*}} : i32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @copysign_f64(%A: memref<?xf64>, %s: f64) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xf64>
      %y = math.copysign %s, %x : f64
      memref.store %y, %A[%c0] : memref<?xf64>
      gpu.return
    }
    gpu.func @copysign_f32(%A: memref<?xf32>, %s: f32) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xf32>
      %y = math.copysign %s, %x : f32
      memref.store %y, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
