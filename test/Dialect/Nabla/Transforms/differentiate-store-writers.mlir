// The adjoint of a store goes to exactly one of the threads that store to the
// element: a plain read-and-zero where the store is proven thread-exclusive
// (under a run-time check of the launch's shape where the proof needs it), an
// atomic exchange with zero otherwise. Every lane storing its warp's sum to
// shared[warp] must not give the slot's adjoint to all 32 of them.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate=remarks=true -verify-diagnostics | FileCheck %s

// Every lane stores to S[tid / 32]: several writers per element.
// CHECK-LABEL: func.func private @__nabla_vjp_lane_redundant_ad
// CHECK: %[[D:.*]] = memref.atomic_rmw assign %{{.*}}, %{{.*}}[%{{.*}}] : (f32, memref<2xf32, #gpu.address_space<workgroup>>) -> f32
// CHECK-NOT: memref.load %{{.*}} : memref<2xf32, #gpu.address_space<workgroup>>
gpu.module @m {
  func.func @lane_redundant(%x: f32, %S: memref<2xf32, #gpu.address_space<workgroup>>) {
    %t = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %w = arith.divui %t, %c32 : index
    // expected-remark @below {{the adjoint of this store is taken with an atomic exchange: several threads may store to the element}}
    memref.store %x, %S[%w] : memref<2xf32, #gpu.address_space<workgroup>>
    return
  }
  func.func @d_lane_redundant_request(%x: f32, %S: memref<2xf32, #gpu.address_space<workgroup>>, %dS: memref<2xf32, #gpu.address_space<workgroup>>) -> f32 {
    %g = nabla.autodiff @lane_redundant(%x, %S, %dS) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<2xf32, #gpu.address_space<workgroup>>, memref<2xf32, #gpu.address_space<workgroup>>) -> f32
    return %g : f32
  }
}

// -----

// The thread id indexes workgroup memory: exclusive in a 1-D block, checked
// when the kernel runs (y and z sizes one), an exchange otherwise.
// CHECK-LABEL: func.func private @__nabla_vjp_by_thread_ad
// CHECK: %[[BY:.*]] = gpu.block_dim y
// CHECK: arith.cmpi eq, %[[BY]]
// CHECK: %[[BZ:.*]] = gpu.block_dim z
// CHECK: %[[ONE_D:.*]] = arith.andi
// CHECK: scf.if %[[ONE_D]] -> (f32) {
// CHECK:   memref.load
// CHECK:   memref.store
// CHECK: } else {
// CHECK:   memref.atomic_rmw assign
// CHECK-NOT: gpu.grid_dim
gpu.module @m {
  func.func @by_thread(%x: f32, %S: memref<64xf32, #gpu.address_space<workgroup>>) {
    %t = gpu.thread_id x
    memref.store %x, %S[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    return
  }
  func.func @d_by_thread_request(%x: f32, %S: memref<64xf32, #gpu.address_space<workgroup>>, %dS: memref<64xf32, #gpu.address_space<workgroup>>) -> f32 {
    %g = nabla.autodiff @by_thread(%x, %S, %dS) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<64xf32, #gpu.address_space<workgroup>>, memref<64xf32, #gpu.address_space<workgroup>>) -> f32
    return %g : f32
  }
}

// -----

// Global memory indexed by block id * block size + thread id (clang's
// spelling of the global id, in i32): the grid's y and z are checked too.
// CHECK-LABEL: func.func private @__nabla_vjp_by_global_id_ad
// CHECK-DAG: gpu.block_dim y
// CHECK-DAG: gpu.grid_dim y
// CHECK-DAG: gpu.grid_dim z
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: } else {
// CHECK:   memref.atomic_rmw assign
gpu.module @m {
  func.func @by_global_id(%x: f32, %Y: memref<?xf32>) {
    %t = gpu.thread_id x
    %b = gpu.block_id x
    %n = gpu.block_dim x
    %t32 = arith.index_cast %t : index to i32
    %b32 = arith.index_cast %b : index to i32
    %n32 = arith.index_cast %n : index to i32
    %s = arith.muli %b32, %n32 : i32
    %i32 = arith.addi %s, %t32 : i32
    %i64 = arith.extsi %i32 : i32 to i64
    %i = arith.index_cast %i64 : i64 to index
    memref.store %x, %Y[%i] : memref<?xf32>
    return
  }
  func.func @d_by_global_id_request(%x: f32, %Y: memref<?xf32>, %dY: memref<?xf32>) -> f32 {
    %g = nabla.autodiff @by_global_id(%x, %Y, %dY) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<?xf32>, memref<?xf32>) -> f32
    return %g : f32
  }
}

// -----

// One thread per block stores (guard thread id == 0) at an index uniform in
// the block: exclusive for workgroup memory in a 1-D block.
// CHECK-LABEL: func.func private @__nabla_vjp_guarded_ad
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK:   memref.load
// CHECK: } else {
// CHECK:   memref.atomic_rmw assign
gpu.module @m {
  func.func @guarded(%x: f32, %S: memref<1xf32, #gpu.address_space<workgroup>>) {
    %t = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      memref.store %x, %S[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
    }
    return
  }
  func.func @d_guarded_request(%x: f32, %S: memref<1xf32, #gpu.address_space<workgroup>>, %dS: memref<1xf32, #gpu.address_space<workgroup>>) -> f32 {
    %g = nabla.autodiff @guarded(%x, %S, %dS) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
    return %g : f32
  }
}

// -----

// The same guard makes global memory exclusive only in a grid of one block:
// thread 0 of every block stores to Y[0].
// CHECK-LABEL: func.func private @__nabla_vjp_guarded_global_ad
// CHECK-DAG: gpu.grid_dim x
// CHECK-DAG: gpu.grid_dim y
// CHECK-DAG: gpu.grid_dim z
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: } else {
// CHECK:   memref.atomic_rmw assign
gpu.module @m {
  func.func @guarded_global(%x: f32, %Y: memref<?xf32>) {
    %t = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      memref.store %x, %Y[%c0] : memref<?xf32>
    }
    return
  }
  func.func @d_guarded_global_request(%x: f32, %Y: memref<?xf32>, %dY: memref<?xf32>) -> f32 {
    %g = nabla.autodiff @guarded_global(%x, %Y, %dY) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<?xf32>, memref<?xf32>) -> f32
    return %g : f32
  }
}

// -----

// A load of the element the thread stored in the same interval accumulates
// plainly only where the store is exclusive: here every lane stored to
// S[tid / 32], so the load's adjoint is an atomic add.
// CHECK-LABEL: func.func private @__nabla_vjp_store_then_load_ad
// CHECK: memref.atomic_rmw addf
// CHECK: memref.atomic_rmw assign
gpu.module @m {
  func.func @store_then_load(%x: f32, %S: memref<2xf32, #gpu.address_space<workgroup>>) -> f32 {
    %t = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %w = arith.divui %t, %c32 : index
    // expected-remark @below {{the adjoint of this store is taken with an atomic exchange}}
    memref.store %x, %S[%w] : memref<2xf32, #gpu.address_space<workgroup>>
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %y = memref.load %S[%w] : memref<2xf32, #gpu.address_space<workgroup>>
    %z = arith.mulf %y, %y : f32
    return %z : f32
  }
  func.func @d_store_then_load_request(%x: f32, %S: memref<2xf32, #gpu.address_space<workgroup>>, %dS: memref<2xf32, #gpu.address_space<workgroup>>, %s: f32) -> f32 {
    %g = nabla.autodiff @store_then_load(%x, %S, %dS, %s) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, memref<2xf32, #gpu.address_space<workgroup>>, memref<2xf32, #gpu.address_space<workgroup>>, f32) -> f32
    return %g : f32
  }
}

// -----

// Packed accesses (eight elements per thread, `8 * gid + k`): the lanes of
// one thread's packed load never meet another thread's (constant offsets
// below the stride, `gid << 3`), nor do the elements a copy loop over k < 8
// stores; all accumulate plainly (behind the 1-D launch check). Offsets as
// wide as the stride (stride 2, offsets 0 and 2) can meet: atomics.
// CHECK-LABEL: func.func private @__nabla_vjp_packed_dd
// CHECK: memref.load
// CHECK: memref.store
// CHECK: } else {
// CHECK: memref.atomic_rmw assign
// CHECK-COUNT-2: } else {
// CHECK-LABEL: func.func private @__nabla_vjp_overlapping_dd
gpu.module @m {
  func.func @packed(%x: memref<?xf32>, %y: memref<?xf32>) {
    %g = gpu.global_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %b = arith.shli %g, %c3 : index
    %i1 = arith.addi %b, %c1 : index
    %a0 = memref.load %x[%b] : memref<?xf32>
    %a1 = memref.load %x[%i1] : memref<?xf32>
    %s = arith.mulf %a0, %a1 : f32
    // expected-remark @below {{loop reversed with a tape of 8 slots per enclosing iteration: 0 bytes per thread}}
    scf.for %k = %c0 to %c8 step %c1 {
      %j = arith.addi %b, %k : index
      memref.store %s, %y[%j] : memref<?xf32>
    }
    return
  }
  func.func @overlapping(%x: memref<?xf32>, %y: memref<?xf32>) {
    %g = gpu.global_id x
    %c2 = arith.constant 2 : index
    %b = arith.muli %g, %c2 : index
    %i2 = arith.addi %b, %c2 : index
    // expected-remark @below {{adjoint accumulation keeps an atomic: other reads of the buffer at other indices can meet this thread's element}}
    %a0 = memref.load %x[%b] : memref<?xf32>
    // expected-remark @below {{adjoint accumulation keeps an atomic: other reads of the buffer at other indices can meet this thread's element}}
    %a2 = memref.load %x[%i2] : memref<?xf32>
    %s = arith.mulf %a0, %a2 : f32
    memref.store %s, %y[%b] : memref<?xf32>
    return
  }
  gpu.func @k(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>) kernel {
    nabla.autodiff @packed(%x, %dx, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>],
                                              ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
    nabla.autodiff @overlapping(%x, %dx, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>],
                                                   ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
    gpu.return
  }
}

// -----

// Grid- and block-stride loops (`for (i = gid; i < n; i += blockDim.x *
// gridDim.x)`, clang's do-while carries i as an iteration argument): no
// other thread visits a thread's elements, so the adjoint of the in-place
// update is plain (an update the primal makes in place is exclusive in any
// launch). Starting at 2 * gid, threads meet: atomics.
// CHECK-LABEL: func.func private @__nabla_vjp_grid_stride_dc(
// CHECK-NOT: atomic_rmw
// CHECK-LABEL: func.func private @__nabla_vjp_block_stride_dc_u1(
// CHECK-NOT: atomic_rmw
// CHECK-LABEL: func.func private @__nabla_vjp_doubled_start_dc_u1(
// CHECK: memref.atomic_rmw assign
// CHECK: memref.atomic_rmw addf
gpu.module @m {
  func.func @grid_stride(%x: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = gpu.thread_id x
    %b = gpu.block_id x
    %bd = gpu.block_dim x
    %gd = gpu.grid_dim x
    %bb = arith.muli %b, %bd : index
    %g = arith.addi %bb, %t : index
    %step = arith.muli %bd, %gd : index
    // expected-remark @below {{loop reversed with a global-memory tape}}
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%i = %g) -> (index) {
      %v = memref.load %x[%i] : memref<?xf32>
      %s = arith.mulf %v, %v : f32
      memref.store %s, %x[%i] : memref<?xf32>
      %next = arith.addi %i, %step : index
      scf.yield %next : index
    }
    return
  }
  func.func @block_stride(%x: memref<?xf32>, %n: index) {
    %t = gpu.thread_id x
    %bd = gpu.block_dim x
    // expected-remark @below {{loop reversed with a global-memory tape}}
    scf.for %i = %t to %n step %bd {
      %v = memref.load %x[%i] : memref<?xf32>
      %s = arith.mulf %v, %v : f32
      memref.store %s, %x[%i] : memref<?xf32>
    }
    return
  }
  func.func @doubled_start(%x: memref<?xf32>, %n: index) {
    %c2 = arith.constant 2 : index
    %g = gpu.global_id x
    %g2 = arith.muli %g, %c2 : index
    %bd = gpu.block_dim x
    %gd = gpu.grid_dim x
    %step = arith.muli %bd, %gd : index
    // expected-remark @below {{loop reversed with}}
    scf.for %i = %g2 to %n step %step {
      // expected-remark @below {{adjoint accumulation keeps an atomic: the index is not proven to be an injective function of the global thread id}}
      %v = memref.load %x[%i] : memref<?xf32>
      %s = arith.mulf %v, %v : f32
      // expected-remark @below {{the adjoint of this store is taken with an atomic exchange}}
      memref.store %s, %x[%i] : memref<?xf32>
    }
    return
  }
  gpu.func @k(%x: memref<?xf32>, %dx: memref<?xf32>, %n: index) kernel {
    nabla.autodiff @grid_stride(%x, %dx, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                              ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
    nabla.autodiff @block_stride(%x, %dx, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                               ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
    nabla.autodiff @doubled_start(%x, %dx, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                                ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
    gpu.return
  }
}
