// RUN: nabla-opt %s --nabla-differentiate-host --canonicalize --cse | FileCheck %s

// Host-level AD through mpi.allreduce (MPI_SUM), over host buffers staged by
// copies from and to the device: the shadows of host buffers are host
// memory, registered for the kernels that add and zero them; the adjoint of
// recv = sum over ranks of send is d send += sum over ranks of d recv (a
// second allreduce into a temporary, added on the host), then d recv = 0.
// Forward mode: the tangent of the sum is the sum of the tangents.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @square(%x: memref<4xf32>, %h: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %p = arith.mulf %a, %a : f32
      memref.store %p, %h[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %comm = mpi.comm_world : !mpi.comm
    %h = gpu.alloc () : memref<4xf32>
    gpu.launch_func @k::@square blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%x : memref<4xf32>, %h : memref<4xf32>)
    %sent = memref.alloc () : memref<4xf32>
    %summed = memref.alloc () : memref<4xf32>
    gpu.memcpy %sent, %h : memref<4xf32>, memref<4xf32>
    mpi.allreduce(%sent, %summed, MPI_SUM, %comm) : memref<4xf32>, memref<4xf32>
    gpu.memcpy %y, %summed : memref<4xf32>, memref<4xf32>
    memref.dealloc %summed : memref<4xf32>
    memref.dealloc %sent : memref<4xf32>
    gpu.dealloc %h : memref<4xf32>
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %y: memref<4xf32>, %dy: memref<4xf32>) {
    nabla.autodiff @program(%x, %dx, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
    return
  }
  func.func @tangent(%x: memref<4xf32>, %dx: memref<4xf32>, %y: memref<4xf32>, %dy: memref<4xf32>) {
    nabla.fwddiff @program(%x, %dx, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
    return
  }
}

// CHECK-LABEL: func.func private @__nabla_jvp_program_dd(
// CHECK:         %[[COMM:.*]] = mpi.comm_world
// CHECK:         mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %[[COMM]])
// CHECK:         mpi.allreduce(%[[TSENT:.*]], %[[TSUMMED:.*]], MPI_SUM, %[[COMM]])
// CHECK:         gpu.memcpy %{{.*}}, %[[TSUMMED]]

// CHECK-LABEL: func.func private @__nabla_vjp_program_dd(
// CHECK:         %[[COMM:.*]] = mpi.comm_world
// CHECK:         %[[SENT:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[DSENT:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         gpu.host_register
// CHECK:         %[[SUMMED:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[DSUMMED:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         mpi.allreduce(%[[SENT]], %[[SUMMED]], MPI_SUM, %[[COMM]])
// The reverse sweep: y's copy, then the allreduce's adjoint on the host.
// CHECK:         @__nabla_host_ad::@accumulate_f32
// CHECK:         %[[TEMP:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         mpi.allreduce(%[[DSUMMED]], %[[TEMP]], MPI_SUM, %[[COMM]])
// CHECK:         %[[FLAT:.*]] = memref.reinterpret_cast %[[TEMP]]
// CHECK:         scf.for
// CHECK:           memref.load %[[FLAT]]
// CHECK:           arith.addf
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf32, strided<[1]>>
// CHECK:         memref.dealloc %[[TEMP]]
// CHECK:         @__nabla_host_ad::@accumulate_f32
// CHECK:         gpu.launch_func @k::@__nabla_adjoint_square_dd
// CHECK:         gpu.host_unregister
// CHECK:         memref.dealloc %[[DSENT]]
