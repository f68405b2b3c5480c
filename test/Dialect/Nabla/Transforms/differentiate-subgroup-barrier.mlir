// nabla.subgroup_barrier (__syncwarp) in both modes: forward mode keeps it
// between the primal's exchange; reverse mode replays it at the mirrored
// point, between the partner's adjoint accumulation into the workgroup
// shadow and the owner's taking of it.
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s

func.func @exchange(%x: memref<?xf32>, %y: memref<?xf32>,
                    %s: memref<64xf32, #gpu.address_space<workgroup>>) {
  %c1 = arith.constant 1 : index
  %t = gpu.thread_id x
  %v = memref.load %x[%t] : memref<?xf32>
  %sq = arith.mulf %v, %v : f32
  memref.store %sq, %s[%t] : memref<64xf32, #gpu.address_space<workgroup>>
  nabla.subgroup_barrier
  %p = arith.xori %t, %c1 : index
  %w = memref.load %s[%p] : memref<64xf32, #gpu.address_space<workgroup>>
  memref.store %w, %y[%t] : memref<?xf32>
  return
}

// Forward mode: the tangents cross the barrier with the values.
// CHECK-LABEL: func.func private @__nabla_jvp_exchange
// CHECK: memref.store
// CHECK: memref.store
// CHECK-NEXT: nabla.subgroup_barrier
// CHECK: memref.load
// CHECK: memref.load
// CHECK: return

// Reverse mode. Forward sweep: the primal's store, barrier, load.
// CHECK-LABEL: func.func private @__nabla_vjp_exchange
// CHECK: memref.store
// CHECK-NEXT: nabla.subgroup_barrier
// CHECK: memref.load
// Reverse sweep: the load's adjoint goes to the partner's shadow slot, the
// barrier is replayed, then the owner takes its slot's adjoint.
// CHECK: memref.atomic_rmw addf
// CHECK-NEXT: nabla.subgroup_barrier
// CHECK: memref.load %arg5[%thread_id_x]
// CHECK: return
func.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>,
                %dy: memref<?xf32>,
                %s: memref<64xf32, #gpu.address_space<workgroup>>,
                %ds: memref<64xf32, #gpu.address_space<workgroup>>) {
  nabla.autodiff @exchange(%x, %dx, %y, %dy, %s, %ds)
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
       ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>,
         memref<64xf32, #gpu.address_space<workgroup>>,
         memref<64xf32, #gpu.address_space<workgroup>>) -> ()
  return
}

func.func @tangent(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>,
                   %dy: memref<?xf32>,
                   %s: memref<64xf32, #gpu.address_space<workgroup>>,
                   %ds: memref<64xf32, #gpu.address_space<workgroup>>) {
  nabla.fwddiff @exchange(%x, %dx, %y, %dy, %s, %ds)
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
       ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>,
         memref<64xf32, #gpu.address_space<workgroup>>,
         memref<64xf32, #gpu.address_space<workgroup>>) -> ()
  return
}
