// nabla-convert-gpu-to-spirv: math.copysign(x, y) becomes
// select(signbit(y), -|x|, |x|) instead of upstream's mask-and-or of bit
// casts, and math.round is expanded to floor(|x|) + (frac >= 0.5) with its sign
// restored the same way: lavapipe (Mesa 22.3.6) miscomputed the (valid)
// mask-and-or form when its result fed a min followed by a barrier and an
// atomic (difftest seeds 65774, f64, and 64742, f32 round; both replayed by
// test_difftest.py).
// RUN: nabla-opt %s --nabla-convert-gpu-to-spirv="workgroup-size=64" | FileCheck %s

// CHECK-LABEL: spirv.func @copysign_f64
// CHECK: %[[ABS:.*]] = spirv.GL.FAbs %{{.*}} : f64
// CHECK: %[[NEG:.*]] = spirv.FNegate %[[ABS]] : f64
// CHECK: %[[BITS:.*]] = spirv.Bitcast %{{.*}} : f64 to i64
// CHECK: %[[SIGN:.*]] = spirv.SLessThan %[[BITS]], %{{.*}} : i64
// CHECK: spirv.Select %[[SIGN]], %[[NEG]], %[[ABS]] : i1, f64
// CHECK-NOT: spirv.BitwiseOr
// CHECK-LABEL: spirv.func @copysign_f32
// CHECK: %[[ABS32:.*]] = spirv.GL.FAbs %{{.*}} : f32
// CHECK: %[[NEG32:.*]] = spirv.FNegate %[[ABS32]] : f32
// CHECK: %[[BITS32:.*]] = spirv.Bitcast %{{.*}} : f32 to i32
// CHECK: %[[SIGN32:.*]] = spirv.SLessThan %[[BITS32]], %{{.*}} : i32
// CHECK: spirv.Select %[[SIGN32]], %[[NEG32]], %[[ABS32]] : i1, f32
// CHECK-NOT: spirv.BitwiseOr
// CHECK-LABEL: spirv.func @round_f32
// CHECK: %[[X:.*]] = spirv.Load
// CHECK: %[[MAG:.*]] = spirv.GL.FAbs %[[X]] : f32
// CHECK: %[[WHOLE:.*]] = spirv.GL.Floor %[[MAG]] : f32
// CHECK: %[[FRAC:.*]] = spirv.FSub %[[MAG]], %[[WHOLE]] : f32
// CHECK: %[[UP:.*]] = spirv.FOrdGreaterThanEqual %[[FRAC]], %{{.*}} : f32
// CHECK: %[[STEP:.*]] = spirv.Select %[[UP]]
// CHECK: %[[R:.*]] = spirv.FAdd %[[WHOLE]], %[[STEP]] : f32
// CHECK: spirv.Bitcast %[[X]] : f32 to i32
// CHECK: spirv.Select
// CHECK-NOT: spirv.BitwiseOr
// CHECK-LABEL: spirv.func @round_vector
// CHECK: spirv.GL.Floor %{{.*}} : vector<4xf32>
// CHECK: spirv.Bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: spirv.SLessThan %{{.*}} : vector<4xi32>
// CHECK-NOT: spirv.BitwiseOr
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
    gpu.func @round_f32(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xf32>
      %y = math.round %x : f32
      memref.store %y, %A[%c0] : memref<?xf32>
      gpu.return
    }
    gpu.func @round_vector(%A: memref<?xf32>, %v: vector<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %y = math.round %v : vector<4xf32>
      %e = vector.extract %y[0] : f32 from vector<4xf32>
      memref.store %e, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
