// nabla-differentiate with ordered (deterministic) accumulation: the kernel
// adjoint's trailing scratch, per-thread accumulators, ordered block sums,
// per-block partials published with an atomic counter and added up in block
// order by the last block; workgroup elements flushed before each replayed
// barrier.
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
// RUN: nabla-opt %s --nabla-differentiate=deterministic=true | FileCheck %s --check-prefix=OPTION

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%X: memref<?xf32>, %W: memref<1xf32>, %Y: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %x = memref.load %X[%i] : memref<?xf32>
      %w = memref.load %W[%c0] : memref<1xf32>
      %y = arith.mulf %w, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @scale -> @scale_ordered
        {activity = [#nabla.activity<const>, #nabla.activity<dup>, #nabla.activity<dup>], deterministic}
    nabla.kernel_adjoint @scale -> @scale_plain
        {activity = [#nabla.activity<const>, #nabla.activity<dup>, #nabla.activity<dup>]}

    gpu.func @broadcast(%Y: memref<?xf32>)
        workgroup(%tile: memref<1xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %s = memref.load %tile[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      memref.store %s, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @broadcast -> @broadcast_ordered
        {activity = [#nabla.activity<dup>], deterministic}
  }
}

// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_scale_cdd_det_scratch(
// CHECK-SAME: %[[W:[^:]*]]: memref<1xf32>, %[[DW:[^:]*]]: memref<1xf32>, {{.*}}, %[[S:[^:]*]]: memref<?xi32>)
// CHECK-SAME: attributes {nabla.scratch_words_per_block = 1 : i64}
// CHECK:      %[[ACC:.*]] = memref.alloca() : memref<1xf32>
// CHECK-NOT:  memref.atomic_rmw addf
// The thread's own sum, then the block's, published as its partial.
// CHECK:      memref.store %{{.*}}, %[[ACC]]
// CHECK:      %[[MINE:.*]] = memref.load %[[ACC]]
// CHECK:      memref.store %{{.*}}, %[[ACC]]
// CHECK:      %[[MINE:.*]] = memref.load %[[ACC]]
// CHECK-NEXT: %[[SUM:.*]] = gpu.all_reduce add %[[MINE]] uniform
// CHECK:      %[[FLAG:.*]] = scf.if
// CHECK:        %[[BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK:        memref.store %[[BITS]], %[[S]]
// CHECK:        %[[ARRIVED:.*]] = memref.atomic_rmw addi %{{.*}}, %[[S]][%{{.*}}] : (i32, memref<?xi32>) -> i32
// CHECK:        arith.cmpi eq, %[[ARRIVED]]
// The last block adds the partials in block order and resets the counter.
// CHECK:      gpu.all_reduce add %[[FLAG]] uniform
// CHECK:      scf.if
// CHECK:        scf.for
// CHECK:          memref.atomic_rmw ori %{{.*}}, %[[S]]
// CHECK:        %[[TOTAL:.*]] = gpu.all_reduce add
// CHECK:        memref.load %[[DW]]
// CHECK:        arith.addf %{{.*}}, %[[TOTAL]]
// CHECK:        memref.store %{{.*}}, %[[DW]]
// CHECK:        memref.store %{{.*}}, %[[S]]
// CHECK-NOT:  memref.atomic_rmw addf
// CHECK:      return

// CHECK-LABEL: gpu.func @scale_ordered(
// CHECK-SAME: %{{[^:]*}}: memref<?xi32>) kernel attributes {nabla.scratch_words_per_block = 1 : i64}
// CHECK:      call @__nabla_vjp___nabla_kernel_scale_cdd_det_scratch(
// CHECK-LABEL: gpu.func @scale_plain(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>) kernel {
// CHECK:      call @__nabla_vjp___nabla_kernel_scale_cdd(


// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_broadcast_dd_det_scratch(
// CHECK-SAME: %[[DT:[^:]*]]: memref<1xf32, #gpu.address_space<workgroup>>, %{{[^:]*}}: memref<?xi32>)
// CHECK-SAME: attributes {nabla.scratch_words_per_block = 0 : i64}
// CHECK:      %[[WACC:.*]] = memref.alloca() : memref<1xf32>
// CHECK:      %[[P:.*]] = memref.load %[[WACC]]
// CHECK:      %[[B:.*]] = gpu.all_reduce add %[[P]] uniform
// CHECK:      scf.if
// CHECK:        memref.load %[[DT]]
// CHECK:        arith.addf %{{.*}}, %[[B]]
// CHECK:        memref.store %{{.*}}, %[[DT]]
// CHECK:      gpu.barrier
// CHECK:      memref.store %{{.*}}, %[[WACC]]

// With the pass option every kernel adjoint is ordered.
// OPTION-LABEL: gpu.func @scale_plain(
// OPTION-SAME: %{{[^:]*}}: memref<?xi32>) kernel attributes {nabla.scratch_words_per_block = 1 : i64}
// OPTION:      call @__nabla_vjp___nabla_kernel_scale_cdd_det_scratch(
