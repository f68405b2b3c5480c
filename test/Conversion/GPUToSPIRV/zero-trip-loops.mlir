// nabla-convert-gpu-to-spirv: an scf.for result is read from a variable only
// the loop body stores to, so a loop that may run zero times gets its result
// selected against the init value (lb < ub); a loop with constant bounds
// that always runs needs no select.
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64" | FileCheck %s

// CHECK-LABEL: spirv.func @dynamic_trips
// CHECK-SAME: %[[M:[a-z0-9]+]]: i32
// CHECK: %[[INIT:.*]] = spirv.Constant 5.000000e+00 : f32
// CHECK: %[[VAR:.*]] = spirv.Variable : !spirv.ptr<f32, Function>
// CHECK: spirv.mlir.loop
// CHECK: spirv.Store "Function" %[[VAR]]
// CHECK: spirv.mlir.merge
// CHECK: %[[LOADED:.*]] = spirv.Load "Function" %[[VAR]] : f32
// CHECK: %[[RUNS:.*]] = spirv.SGreaterThan %[[M]], %{{.*}} : i32
// CHECK: %[[RESULT:.*]] = spirv.Select %[[RUNS]], %[[LOADED]], %[[INIT]] : i1, f32
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %[[RESULT]] : f32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dynamic_trips(%A: memref<?xf32>, %m: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %init = arith.constant 5.0 : f32
      %r = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %init) -> (f32) {
        %s = arith.addf %acc, %init : f32
        scf.yield %s : f32
      }
      memref.store %r, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: spirv.func @constant_trips
// CHECK: %[[VAR:.*]] = spirv.Variable : !spirv.ptr<f32, Function>
// CHECK: spirv.mlir.loop
// CHECK: %[[LOADED:.*]] = spirv.Load "Function" %[[VAR]] : f32
// CHECK-NOT: spirv.Select
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %[[LOADED]] : f32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @constant_trips(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %init = arith.constant 5.0 : f32
      %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (f32) {
        %s = arith.addf %acc, %init : f32
        scf.yield %s : f32
      }
      memref.store %r, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
