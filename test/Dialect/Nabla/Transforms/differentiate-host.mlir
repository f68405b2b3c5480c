// RUN: nabla-opt %s --nabla-differentiate-host --canonicalize --cse | FileCheck %s
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s --check-prefix=EXPANDED

// Host-level AD of a host function that launches kernels (HostDerivative.cpp):
// a launch writes %y, a loop with a runtime trip count updates %y in place.
// The derivative runs the program, keeping a copy of %y before each in-place
// update (one slot per iteration) and its final contents; the reverse sweep
// runs the loop backwards, restoring %y before each update's adjoint (which
// recomputes the kernel from what it read) and after it, then the first
// launch's adjoint, and finally gives %y its final contents back.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<4xf32>, %y: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %p = arith.mulf %a, %a : f32
      memref.store %p, %y[%i] : memref<4xf32>
      gpu.return
    }
    gpu.func @update(%y: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %y[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %y[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>, %y: memref<4xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%x : memref<4xf32>, %y : memref<4xf32>)
    scf.for %i = %c0 to %n step %c1 {
      gpu.launch_func @kernels::@update blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1)
          args(%y : memref<4xf32>)
    }
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %y: memref<4xf32>, %dy: memref<4xf32>, %n: index) {
    nabla.autodiff @program(%x, %dx, %y, %dy, %n) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
        : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, index) -> ()
    return
  }
  func.func @tangent(%x: memref<4xf32>, %dx: memref<4xf32>, %y: memref<4xf32>, %dy: memref<4xf32>, %n: index) {
    nabla.fwddiff @program(%x, %dx, %y, %dy, %n) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
        : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, index) -> ()
    return
  }
}

// The adjoint and tangent kernels hold requests nabla-differentiate expands.
// CHECK-LABEL: gpu.module @kernels
// CHECK:       gpu.func @__nabla_adjoint_update_d(
// CHECK:         nabla.autodiff @__nabla_kernel_update
// CHECK:       gpu.func @__nabla_tangent_update_d(
// CHECK:         nabla.fwddiff @__nabla_kernel_update

// Forward mode: the tangent kernels in program order, no copies.
// CHECK-LABEL: func.func private @__nabla_jvp_program_ddc(
// CHECK:         gpu.launch_func @kernels::@__nabla_tangent_scale_dd
// CHECK:         scf.for
// CHECK-NEXT:      gpu.launch_func @kernels::@__nabla_tangent_update_d
// CHECK-NOT:     copy_f32
// CHECK:         return

// CHECK-LABEL: func.func private @__nabla_vjp_program_ddc(
// CHECK-SAME:      %[[X:.*]]: memref<4xf32>, %[[DX:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32>, %[[DY:.*]]: memref<4xf32>, %[[N:.*]]: index)
// CHECK:         gpu.launch_func @kernels::@scale {{.*}} args(%[[X]] : memref<4xf32>, %[[Y]] : memref<4xf32>)
// CHECK:         %[[TRIPS:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK:         %[[SIZE:.*]] = arith.muli %[[TRIPS]], %[[C4:.*]] : index
// CHECK:         %[[SLOTS:.*]] = gpu.alloc (%[[SIZE]]) : memref<?xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[N]] step
// CHECK:           %[[AT:.*]] = arith.muli %[[I]], %[[C4]] : index
// CHECK:           gpu.launch_func @__nabla_host_ad::@copy_f32 {{.*}} args(%[[SLOTS]] : memref<?xf32>, %[[AT]] : index,
// CHECK-NEXT:      gpu.launch_func @kernels::@update {{.*}} args(%[[Y]] : memref<4xf32>)
// CHECK:         %[[FINAL:.*]] = gpu.alloc (%[[C4]]) : memref<?xf32>
// CHECK:         gpu.launch_func @__nabla_host_ad::@copy_f32 {{.*}} args(%[[FINAL]] : memref<?xf32>
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %[[TRIPS]] step
// CHECK:           %[[LAST:.*]] = arith.subi %[[TRIPS]], %{{.*}} : index
// CHECK:           %[[ITER:.*]] = arith.subi %[[LAST]], %[[K]] : index
// CHECK:           %[[FROM:.*]] = arith.muli %[[ITER]], %[[C4]] : index
// CHECK:           gpu.launch_func @__nabla_host_ad::@copy_f32 {{.*}} %[[SLOTS]] : memref<?xf32>, %[[FROM]] : index
// CHECK-NEXT:      gpu.launch_func @kernels::@__nabla_adjoint_update_d {{.*}} args(%[[Y]] : memref<4xf32>, %[[DY]] : memref<4xf32>)
// CHECK-NEXT:      gpu.launch_func @__nabla_host_ad::@copy_f32 {{.*}} %[[SLOTS]] : memref<?xf32>, %[[FROM]] : index
// CHECK:         gpu.launch_func @kernels::@__nabla_adjoint_scale_dd {{.*}} args(%[[X]] : memref<4xf32>, %[[DX]] : memref<4xf32>, %[[Y]] : memref<4xf32>, %[[DY]] : memref<4xf32>)
// CHECK-NEXT:    gpu.launch_func @__nabla_host_ad::@copy_f32 {{.*}} %[[FINAL]] : memref<?xf32>
// CHECK-DAG:     gpu.dealloc %[[SLOTS]]
// CHECK-DAG:     gpu.dealloc %[[FINAL]]

// CHECK-LABEL: func.func @grad(
// CHECK:         call @__nabla_vjp_program_ddc(

// CHECK:       gpu.module @__nabla_host_ad
// CHECK:         gpu.func @copy_f32(%{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>}

// nabla-differentiate runs the host part first, then expands every request.
// EXPANDED-NOT: nabla.autodiff
// EXPANDED-NOT: nabla.fwddiff
// EXPANDED: func.func private @__nabla_vjp___nabla_kernel_update_d(
