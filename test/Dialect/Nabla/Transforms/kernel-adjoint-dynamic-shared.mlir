// nabla.kernel_adjoint of a kernel that views dynamic shared memory (the
// typed view from byte 0, as CUDA's extern __shared__ raises): the body
// function takes the view as a parameter, and the adjoint passes it with a
// shadow after the primal in the launch's region, at the launch's bytes (an
// i32 marked nabla.dynamic_shared_memory_bytes the runtimes set), zeroed by
// the block before the reverse.
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
// CHECK-LABEL: func.func private @__nabla_kernel_k
// CHECK-SAME: (%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: return
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_k_ddd
// CHECK-LABEL: gpu.func @k(
// CHECK: gpu.dynamic_shared_memory
// CHECK-LABEL: gpu.func @k_adjoint
// CHECK-SAME: %[[BYTES:[a-z0-9]+]]: i32 {nabla.dynamic_shared_memory_bytes}) kernel
// CHECK: %[[OFF:.*]] = arith.index_castui %[[BYTES]]
// CHECK: %[[RAW:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[PRIMAL:.*]] = memref.view %[[RAW]][%{{.*}}][%{{.*}}]
// CHECK: %[[COUNT:.*]] = arith.divui %[[OFF]], %c4
// CHECK: %[[SHADOW:.*]] = memref.view %[[RAW]][%[[OFF]]][%[[COUNT]]]
// CHECK: scf.for %{{.*}} to %[[COUNT]]
// CHECK: memref.store %{{.*}}, %[[SHADOW]]
// CHECK: gpu.barrier
// CHECK: call @__nabla_vjp___nabla_kernel_k_ddd({{.*}}, %[[PRIMAL]], %[[SHADOW]])
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf32>, %y: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %big = arith.constant 1024 : index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %raw[%c0][%big] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<?xf32>
      %sq = arith.mulf %v, %v : f32
      memref.store %sq, %s[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %n = gpu.block_dim x
      %last = arith.subi %n, %c1 : index
      %r = arith.subi %last, %t : index
      %w = memref.load %s[%r] : memref<?xf32, #gpu.address_space<workgroup>>
      memref.store %w, %y[%t] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @k -> @k_adjoint {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
  }
}
