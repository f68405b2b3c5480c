// RUN: nabla-opt %s --split-input-file --nabla-differentiate --verify-diagnostics | FileCheck %s

// nabla.memory_fence in derivatives: forward mode keeps it where it stands;
// reverse mode keeps a workgroup fence in the forward sweep and replays it
// at the mirrored point of the reverse sweep; a device (or system) fence in
// reverse mode is a located error (blocks of one launch pass data through
// it, and the reverse sweep cannot order their adjoints).

gpu.module @m {
  func.func @f(%x: memref<64xf32>, %y: memref<64xf32>) {
    %i = gpu.thread_id x
    %a = memref.load %x[%i] : memref<64xf32>
    %s = arith.mulf %a, %a : f32
    nabla.memory_fence "workgroup"
    memref.store %s, %y[%i] : memref<64xf32>
    return
  }
  func.func @grad(%x: memref<64xf32>, %dx: memref<64xf32>, %y: memref<64xf32>, %dy: memref<64xf32>) {
    nabla.autodiff @f(%x, %dx, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
    return
  }
  func.func @tangent(%x: memref<64xf32>, %dx: memref<64xf32>, %y: memref<64xf32>, %dy: memref<64xf32>) {
    nabla.fwddiff @f(%x, %dx, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
    return
  }
}

// CHECK-LABEL: func.func private @__nabla_jvp_f_dd(
// CHECK:         arith.mulf
// CHECK:         nabla.memory_fence "workgroup"
// CHECK:         memref.store
// CHECK-NOT:     nabla.memory_fence
// CHECK:         return
// CHECK-LABEL: func.func private @__nabla_vjp_f_dd(
// CHECK:         nabla.memory_fence "workgroup"
// CHECK:         memref.load %{{.*}} : memref<64xf32>
// CHECK:         nabla.memory_fence "workgroup"
// CHECK:         return

// -----

gpu.module @m {
  func.func @f(%x: memref<64xf32>, %y: memref<64xf32>) {
    %i = gpu.thread_id x
    %a = memref.load %x[%i] : memref<64xf32>
    %s = arith.mulf %a, %a : f32
    memref.store %s, %y[%i] : memref<64xf32>
    // expected-error @below {{'nabla.memory_fence' op cannot be differentiated in reverse mode: a device-scope fence (__threadfence)}}
    nabla.memory_fence "device"
    return
  }
  func.func @grad(%x: memref<64xf32>, %dx: memref<64xf32>, %y: memref<64xf32>, %dy: memref<64xf32>) {
    nabla.autodiff @f(%x, %dx, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
    return
  }
}
