// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s

// nabla.kernel_tangent: the forward-mode counterpart of nabla.kernel_adjoint.
// The tangent kernel takes each dup parameter followed by its tangent (a
// float scalar's tangent value too), zeroes the tangent of its workgroup
// attribution, and runs the forward mode of the kernel's body.

gpu.module @m {
  gpu.func @scale(%x: memref<64xf32>, %a: f32, %y: memref<64xf32>)
      workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %i = gpu.thread_id x
    %c63 = arith.constant 63 : index
    %v = memref.load %x[%i] : memref<64xf32>
    %p = arith.mulf %v, %a : f32
    memref.store %p, %tile[%i] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %j = arith.subi %c63, %i : index
    %w = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %y[%i] : memref<64xf32>
    gpu.return
  }
  nabla.kernel_tangent @scale -> @scale_tangent
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>]}
}

// CHECK-LABEL: gpu.func @scale_tangent(
// CHECK-SAME:      %[[X:.*]]: memref<64xf32>, %[[DX:.*]]: memref<64xf32>, %[[A:.*]]: f32, %[[DA:.*]]: f32, %[[Y:.*]]: memref<64xf32>, %[[DY:.*]]: memref<64xf32>)
// CHECK-SAME:      workgroup(%[[TILE:.*]] : memref<64xf32, #gpu.address_space<workgroup>>, %[[DTILE:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:      kernel
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[DTILE]]
// CHECK:         gpu.barrier
// CHECK:         call @__nabla_jvp___nabla_kernel_scale_dddd(%[[X]], %[[DX]], %[[A]], %[[DA]], %[[Y]], %[[DY]], %[[TILE]], %[[DTILE]])
// CHECK-NOT:     nabla.fwddiff
