// Loops reversed by binomial checkpointing (LoopCheckpointing.cpp): the
// snapshots' slots and the remark with the private bytes per thread, a
// per-loop snapshot budget, elements updated in place promoted to
// loop-carried values first, and a body reading differentiated memory (no
// preaccumulation). Tapes: differentiate-loops-tape.mlir; Jacobians:
// differentiate-loops-preaccumulate.mlir; the tape budget:
// differentiate-loops-budget.mlir.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate=remarks=true -verify-diagnostics | FileCheck %s

// A trip count from a parameter, checkpoints asked for: 8 snapshots of the
// state (an f32) and its position (8 bytes): 96 bytes per thread, static.
// (Without the attribute this loop is preaccumulated: @preaccumulated.)
// CHECK-LABEL: func.func private @__nabla_vjp_dynamic_ac_a
// CHECK-DAG: memref.alloca() : memref<8x2xi32>
// CHECK-DAG: memref.alloca() : memref<8xi32>
// CHECK: scf.for
// CHECK: scf.while
// CHECK-NOT: memref.alloca
// CHECK: return
func.func @dynamic(%x: f32, %m: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @below {{loop reversed by binomial checkpointing with 8 snapshots: 96 bytes per thread}}
  %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %x) -> (f32) {
    %s = math.sin %a : f32
    scf.yield %s : f32
  } {nabla.checkpoints = 8 : i64}
  return %r : f32
}
func.func @g(%x: f32, %m: index, %s: f32) -> f32 {
  %d:2 = nabla.autodiff @dynamic(%x, %m, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<active>]} : (f32, index, f32) -> (f32, f32)
  return %d#1 : f32
}

// -----
// A per-loop snapshot budget.
// CHECK-LABEL: func.func private @__nabla_vjp_budgeted_ac_a
// CHECK-DAG: memref.alloca() : memref<3x2xi32>
// CHECK-DAG: memref.alloca() : memref<3xi32>
func.func @budgeted(%x: f32, %m: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @below {{loop reversed by binomial checkpointing with 3 snapshots: 36 bytes per thread}}
  %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %x) -> (f32) {
    %s = math.sin %a : f32
    scf.yield %s : f32
  } {nabla.checkpoints = 3 : i64}
  return %r : f32
}
func.func @g(%x: f32, %m: index, %s: f32) -> f32 {
  %d:2 = nabla.autodiff @budgeted(%x, %m, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<active>]} : (f32, index, f32) -> (f32, f32)
  return %d#1 : f32
}

// -----
// An element updated in place every iteration becomes a loop-carried value
// (loaded before the loop, stored after it, both only if it runs), so the
// dynamic loop can be checkpointed.
// CHECK-LABEL: func.func private @__nabla_vjp_inplace_dc
// CHECK: %[[RUNS:.*]] = arith.cmpi slt
// CHECK: scf.if %[[RUNS]] -> (f32
// CHECK: memref.load
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.load
// CHECK: scf.yield
// CHECK: scf.if %[[RUNS]] {
// CHECK-NEXT: memref.store
func.func @inplace(%A: memref<?xf32>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @below {{loop reversed by binomial checkpointing with 8 snapshots: 96 bytes per thread}}
  scf.for %k = %c0 to %m step %c1 {
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %a = memref.load %A[%c0] : memref<?xf32>
    %s = math.sin %a : f32
    // expected-remark @below {{the adjoint of this store is taken with an atomic exchange}}
    memref.store %s, %A[%c0] : memref<?xf32>
  } {nabla.checkpoints = 8 : i64}
  return
}
func.func @g(%A: memref<?xf32>, %dA: memref<?xf32>, %m: index) {
  nabla.autodiff @inplace(%A, %dA, %m) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}

// -----
// A body reading differentiated memory (its adjoint needs every iteration's
// index) is not preaccumulated: checkpointed as before.
// CHECK-LABEL: func.func private @__nabla_vjp_reads_memory_dcc
// CHECK: scf.while
func.func @reads_memory(%X: memref<?xf32>, %m: index, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @below {{loop reversed by binomial checkpointing with 8 snapshots: 96 bytes per thread}}
  %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %init) -> (f32) {
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %v = memref.load %X[%k] : memref<?xf32>
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  return %r : f32
}
func.func @g(%X: memref<?xf32>, %dX: memref<?xf32>, %m: index, %init: f32, %s: f32) {
  nabla.autodiff @reads_memory(%X, %dX, %m, %init, %s) {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (memref<?xf32>, memref<?xf32>, index, f32, f32) -> ()
  return
}

// -----
// A tile in workgroup memory overwritten and read by every iteration of a
// loop with a run-time trip count (a tiled matmul's shared tiles), with
// checkpoints asked for: the snapshots hold the tile too. The forward sweep
// saves it before the loop (each thread its share, between barriers: no
// thread overwrites an element before its owner saved it); the reverse
// sweep restores it with the state (between barriers), and recomputation
// writes it and keeps the loop's barriers. 16 floats of tile + the f32
// state and its position: 8 snapshots, (64 + 4 + 8) * 8 = 608 bytes per
// thread. (Without the attribute every step is snapshotted: @tile_steps.)
// CHECK-LABEL: func.func private @__nabla_vjp_tile_dddc
// CHECK: memref.alloca() : memref<128xi32>
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16{{.*}} step
// CHECK: memref.load %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}} : memref<128xi32>
// CHECK: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK: scf.while
// CHECK: gpu.barrier
// CHECK: memref.load %{{.*}} : memref<128xi32>
// CHECK: memref.store %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// Recomputation writes the tile and keeps the barriers.
// CHECK: scf.for
// CHECK: memref.store %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK: return
func.func @tile(%A: memref<?xf32>, %Y: memref<?xf32>, %T: memref<16xf32, #gpu.address_space<workgroup>>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %t = gpu.thread_id x
  %init = arith.constant 0.0 : f32
  // expected-remark @below {{loop reversed by binomial checkpointing with 8 snapshots of its state and of the 1 buffer(s) it overwrites and reads: 608 bytes per thread}}
  %r = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %init) -> (f32) {
    %i = arith.muli %k, %c16 : index
    %j = arith.addi %i, %t : index
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %a = memref.load %A[%j] : memref<?xf32>
    memref.store %a, %T[%t] : memref<16xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %o = arith.subi %c16, %c1 : index
    %u = arith.subi %o, %t : index
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %b = memref.load %T[%u] : memref<16xf32, #gpu.address_space<workgroup>>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    gpu.barrier
    scf.yield %s : f32
  } {nabla.checkpoints = 8}
  memref.store %r, %Y[%t] : memref<?xf32>
  return
}
func.func @gtile(%A: memref<?xf32>, %dA: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %T: memref<16xf32, #gpu.address_space<workgroup>>, %dT: memref<16xf32, #gpu.address_space<workgroup>>, %m: index) {
  nabla.autodiff @tile(%A, %dA, %Y, %dY, %T, %dT, %m) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<16xf32, #gpu.address_space<workgroup>>, memref<16xf32, #gpu.address_space<workgroup>>, index) -> ()
  return
}

// -----
// The same loop without the attribute: every step's state and tile go to
// the global tape (nabla.tape, sized at entry by the trip count, the tile's
// share per thread the tile over the block's thread count rounded up). The
// forward loop saves its iter_arg and the thread's share of the tile at the
// start of each step, between barriers; the reverse sweep runs the steps
// backwards, each restoring its state and tile (between barriers), then
// recomputing and reversing that step alone (no revolve schedule, no
// private copies of the tile).
// CHECK-LABEL: func.func private @__nabla_vjp_tile_steps_dddc
// CHECK-DAG: %[[STATE:.*]] = nabla.tape %{{.*}} : memref<?xi32>
// CHECK-DAG: %[[TILE:.*]] = nabla.tape %{{.*}} : memref<?xi32>
// CHECK-NOT: memref.alloca() : memref<128xi32>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK: %[[STEP:.*]] = arith.divui
// CHECK: arith.bitcast %[[ACC]] : f32 to i32
// CHECK: memref.store %{{.*}}, %[[STATE]][%[[STEP]]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: scf.if
// CHECK: memref.load %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// The reverse sweep: step count - 1 - j restored, recomputed, reversed (the
// step's state is reloaded where the reverse needs it: not here, the sum's
// adjoint needs no primal value).
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NOT: scf.while
// CHECK: gpu.barrier
// CHECK: memref.load %[[TILE]]
// CHECK: memref.store %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK: return
func.func @tile_steps(%A: memref<?xf32>, %Y: memref<?xf32>, %T: memref<16xf32, #gpu.address_space<workgroup>>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %t = gpu.thread_id x
  %init = arith.constant 0.0 : f32
  // expected-remark @below {{loop reversed from a snapshot of every step: its state and each thread's share of the 1 buffer(s) it overwrites and reads, in the global tape; nothing recomputed, 0 bytes per thread}}
  %r = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %init) -> (f32) {
    %i = arith.muli %k, %c16 : index
    %j = arith.addi %i, %t : index
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %a = memref.load %A[%j] : memref<?xf32>
    memref.store %a, %T[%t] : memref<16xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %o = arith.subi %c16, %c1 : index
    %u = arith.subi %o, %t : index
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %b = memref.load %T[%u] : memref<16xf32, #gpu.address_space<workgroup>>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    gpu.barrier
    scf.yield %s : f32
  }
  memref.store %r, %Y[%t] : memref<?xf32>
  return
}
func.func @gtile_steps(%A: memref<?xf32>, %dA: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %T: memref<16xf32, #gpu.address_space<workgroup>>, %dT: memref<16xf32, #gpu.address_space<workgroup>>, %m: index) {
  nabla.autodiff @tile_steps(%A, %dA, %Y, %dY, %T, %dT, %m) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<16xf32, #gpu.address_space<workgroup>>, memref<16xf32, #gpu.address_space<workgroup>>, index) -> ()
  return
}

// -----
// A 4 x 8 tile (rank 2, as MLIR kernels declare `__shared__ float T[4][8]`):
// its snapshot copies the elements in row-major order, element e at
// [e / 8, e % 8].
// CHECK-LABEL: func.func private @__nabla_vjp_tile2d_dddc
// CHECK: scf.for
// CHECK: scf.if
// CHECK: %[[COL:.*]] = arith.remui %{{.*}}, %c8
// CHECK: %[[ROW:.*]] = arith.divui %{{.*}}, %c8
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<4x8xf32, #gpu.address_space<workgroup>>
// CHECK: return
func.func @tile2d(%A: memref<?xf32>, %Y: memref<?xf32>, %T: memref<4x8xf32, #gpu.address_space<workgroup>>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %t = gpu.thread_id x
  %r = arith.divui %t, %c8 : index
  %c = arith.remui %t, %c8 : index
  %init = arith.constant 0.0 : f32
  // expected-remark @below {{loop reversed from a snapshot of every step: its state and each thread's share of the 1 buffer(s) it overwrites and reads, in the global tape; nothing recomputed, 0 bytes per thread}}
  %out = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %init) -> (f32) {
    %i = arith.muli %k, %c32 : index
    %j = arith.addi %i, %t : index
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %a = memref.load %A[%j] : memref<?xf32>
    // expected-remark @below {{the adjoint of this store is taken with an atomic exchange}}
    memref.store %a, %T[%r, %c] : memref<4x8xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %b = memref.load %T[%c0, %c] : memref<4x8xf32, #gpu.address_space<workgroup>>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    gpu.barrier
    scf.yield %s : f32
  }
  memref.store %out, %Y[%t] : memref<?xf32>
  return
}
func.func @gtile2d(%A: memref<?xf32>, %dA: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %T: memref<4x8xf32, #gpu.address_space<workgroup>>, %dT: memref<4x8xf32, #gpu.address_space<workgroup>>, %m: index) {
  nabla.autodiff @tile2d(%A, %dA, %Y, %dY, %T, %dT, %m) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<4x8xf32, #gpu.address_space<workgroup>>, memref<4x8xf32, #gpu.address_space<workgroup>>, index) -> ()
  return
}

// -----

// An in-place prefix sum (a[i] += a[i - 1]) with a run-time trip count: the
// loop reads what it overwrote, but only to add it and store it back, so
// the reverse sweep needs no primal value (the adjoint of a[i] += a[i - 1]
// reads shadows only) and recomputation may read the stale values: the loop
// is reversed (restarted from its index, its only state), not refused. (A
// stale value that reaches a product, a loop-carried value or a comparison
// still refuses: differentiate-invalid.mlir.)
// CHECK-LABEL: func.func private @__nabla_vjp_prefix_dc
// CHECK: scf.for
// CHECK: return
func.func @prefix(%A: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  // expected-remark @below {{loop reversed by recomputing each iteration from its index (its only state): no snapshots, 0 bytes per thread}}
  scf.for %i = %c1 to %n step %c1 {
    %im1 = arith.subi %i, %c1 : index
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %a = memref.load %A[%im1] : memref<?xf32>
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %b = memref.load %A[%i] : memref<?xf32>
    %s = arith.addf %a, %b : f32
    // expected-remark @below {{the adjoint of this store is taken with an atomic exchange}}
    memref.store %s, %A[%i] : memref<?xf32>
  }
  return
}
func.func @g_prefix(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) {
  nabla.autodiff @prefix(%A, %dA, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}
