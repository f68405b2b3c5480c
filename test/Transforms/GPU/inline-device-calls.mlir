// nabla-inline-device-calls: device functions are inlined transitively into
// kernels and erased; recursion and body-less callees are errors.
// RUN: nabla-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(nabla-inline-device-calls))" -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.module @chain
// CHECK-NOT: func.func
// CHECK: gpu.func @k(%[[A:.*]]: memref<?xf32>)
// CHECK-NOT: func.call
// CHECK: %[[X:.*]] = memref.load %[[A]]
// CHECK: %[[Y:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK: memref.store %[[Y]], %[[A]]
gpu.module @chain {
  func.func @square(%x: f32) -> f32 {
    %y = arith.mulf %x, %x : f32
    return %y : f32
  }
  func.func @update(%A: memref<?xf32>, %i: index) {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = func.call @square(%x) : (f32) -> f32
    memref.store %y, %A[%i] : memref<?xf32>
    return
  }
  gpu.func @k(%A: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    func.call @update(%A, %c0) : (memref<?xf32>, index) -> ()
    gpu.return
  }
}

// -----

gpu.module @recursive {
  func.func @f(%x: f32) -> f32 {
    // expected-error @below {{'func.call' op recursive call to @f cannot be inlined for this target}}
    %y = func.call @f(%x) : (f32) -> f32
    return %y : f32
  }
  gpu.func @k(%x: f32) kernel {
    %y = func.call @f(%x) : (f32) -> f32
    gpu.return
  }
}

// -----

gpu.module @external {
  func.func private @ext(f32) -> f32
  gpu.func @k(%x: f32) kernel {
    // expected-error @below {{'func.call' op calls @ext, which has no body in this gpu.module and cannot be inlined for this target}}
    %y = func.call @ext(%x) : (f32) -> f32
    gpu.return
  }
}
