// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
// A deterministic kernel adjoint whose differentiated input is a rank-0
// memref (`memref<f32>`, read by every thread): the ordered accumulation
// sums each thread's contribution privately, reduces the block in order and
// adds the blocks' partials in block order into the rank-0 shadow (once
// crashed nabla-opt).
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_acc_dd_det_scratch
// CHECK-SAME: (%{{.*}}: memref<f32>, %[[DX:.*]]: memref<f32>,
// CHECK: memref.alloca() : memref<1xf32>
// CHECK: gpu.all_reduce add
// CHECK: gpu.all_reduce add
// CHECK: gpu.all_reduce add
// CHECK: memref.load %[[DX]][] : memref<f32>
// CHECK: memref.store %{{.*}}, %[[DX]][] : memref<f32>
// CHECK-LABEL: gpu.func @acc_ordered
// CHECK-SAME: nabla.scratch_words_per_block = 1
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @acc(%X: memref<f32>, %Y: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %x = memref.load %X[] : memref<f32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @acc -> @acc_ordered
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>], deterministic}
  }
}
