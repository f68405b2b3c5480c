// nabla-convert-gpu-to-spirv: f32 math.atan and math.atan2 are expanded into
// arithmetic (range reduction to [0, 1], then around tan(pi/8), a degree-4
// polynomial) instead of GLSL.std.450 Atan or upstream's atan2 approximation:
// both were off by ~350 ulp on lavapipe, which a loop amplified past every
// tolerance (difftest seed 62486). The accuracy is checked by running
// (test/Integration/test_math_accuracy.py).
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64" | FileCheck %s

// CHECK-LABEL: spirv.func @atan_f32
// CHECK-NOT: spirv.GL.Atan
// CHECK: spirv.GL.FAbs
// CHECK: spirv.FOrdGreaterThan
// CHECK: spirv.FDiv
// The reduction around tan(pi/8): (t - 1) / (t + 1).
// CHECK: spirv.FOrdGreaterThan
// CHECK-DAG: spirv.FAdd
// CHECK-DAG: spirv.FSub
// CHECK: spirv.FDiv
// CHECK-COUNT-4: spirv.FMul
// CHECK: spirv.Select
// CHECK-NOT: spirv.GL.Atan
// CHECK: spirv.Return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @atan_f32(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xf32>
      %y = math.atan %x : f32
      memref.store %y, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// atan2 keeps the IEEE special cases: 0/0 and inf/inf are replaced before the
// reduction, and the quadrant follows x's sign bit (so atan2(+0, -0) = pi).
// CHECK-LABEL: spirv.func @atan2_f32
// CHECK-NOT: spirv.GL.Atan
// CHECK: spirv.GL.FAbs
// CHECK: spirv.GL.FAbs
// CHECK: spirv.FDiv
// CHECK: spirv.FOrdEqual
// CHECK: spirv.Bitcast %{{.*}} : f32 to i32
// CHECK: spirv.SLessThan
// CHECK-NOT: spirv.GL.Atan
// CHECK: spirv.Return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @atan2_f32(%A: memref<?xf32>, %B: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %y = memref.load %A[%c0] : memref<?xf32>
      %x = memref.load %B[%c0] : memref<?xf32>
      %r = math.atan2 %y, %x : f32
      memref.store %r, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Vectors are expanded element-wise with splat constants.
// CHECK-LABEL: spirv.func @atan_vector
// CHECK-NOT: spirv.GL.Atan
// CHECK: spirv.FDiv %{{.*}} : vector<4xf32>
// CHECK: spirv.Return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @atan_vector(%A: memref<?xvector<4xf32>>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xvector<4xf32>>
      %y = math.atan %x : vector<4xf32>
      memref.store %y, %A[%c0] : memref<?xvector<4xf32>>
      gpu.return
    }
  }
}
