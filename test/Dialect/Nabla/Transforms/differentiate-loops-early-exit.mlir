// Reverse mode of loops that leave early, count with `<=`, or are bounded by
// the range of their bounds (clang's loops: `for (...) { if (c) break; }`,
// `for (t2 = 0; t2 <= t; t2 += 32)`, `for (i = 0; i < min(n, 32); ++i)`),
// when their reads are overwritten so that they must be taped.
// RUN: nabla-opt %s --nabla-differentiate="remarks=true" -split-input-file 2>&1 | FileCheck %s

// A counted do-while with a second exit: a loop of the counted bound whose
// iterations after the exit are skipped under a flag, taped in global memory.
// CHECK: remark: loop reversed with a global-memory tape of {{[0-9]+}} bytes per iteration and thread, its trip count known at run time
// CHECK-LABEL: func.func private @__nabla_vjp_early_dcc(
// CHECK: nabla.tape
// CHECK: scf.for %{{.*}} iter_args(%[[LIVE:.*]] = %true
// CHECK: scf.if %[[LIVE]]
// CHECK-NOT: scf.while
func.func @early(%A: memref<?xf32>, %n: i32, %limit: f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.while (%i = %c0, %s = %zero) : (i32, f32) -> (i32, f32) {
    %idx = arith.index_cast %i : i32 to index
    %x = memref.load %A[%idx] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %A[%idx] : memref<?xf32>
    %s2 = arith.addf %s, %y : f32
    %next = arith.addi %i, %c1 : i32
    %more = arith.cmpi slt, %next, %n : i32
    %small = arith.cmpf olt, %s2, %limit : f32
    %go = arith.andi %more, %small : i1
    scf.condition(%go) %next, %s2 : i32, f32
  } do {
  ^bb0(%i: i32, %s: f32):
    scf.yield %i, %s : i32, f32
  }
  %c0i = arith.constant 0 : index
  memref.store %r#1, %A[%c0i] : memref<?xf32>
  return
}
func.func @grad_early(%A: memref<?xf32>, %dA: memref<?xf32>, %n: i32, %limit: f32) {
  nabla.autodiff @early(%A, %dA, %n, %limit)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, i32, f32) -> ()
  return
}

// -----

// `for (i = 0; i <= n; i += 4)` rotated (the new counter tested `<=`):
// (n - 0) / 4 + 1 iterations when n >= 0, at least one.
// CHECK: remark: loop reversed with a global-memory tape
// CHECK-LABEL: func.func private @__nabla_vjp_upto_dc(
// CHECK-DAG: arith.cmpi sle
// CHECK-DAG: arith.divsi %{{.*}}, %c4
// CHECK: nabla.tape
// CHECK-NOT: scf.while
func.func @upto(%A: memref<?xf32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %idx = arith.index_cast %i : i32 to index
    %x = memref.load %A[%idx] : memref<?xf32>
    %y = math.sin %x : f32
    memref.store %y, %A[%idx] : memref<?xf32>
    %next = arith.addi %i, %c4 : i32
    %more = arith.cmpi sle, %next, %n : i32
    scf.condition(%more) %next : i32
  } do {
  ^bb0(%i: i32):
    scf.yield %i : i32
  }
  return
}
func.func @grad_upto(%A: memref<?xf32>, %dA: memref<?xf32>, %n: i32) {
  nabla.autodiff @upto(%A, %dA, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, i32) -> ()
  return
}

// -----

// Trip counts of run-time bounds whose range is known: min(n, 8), and
// (b & 14) for a b = min(k, 16) tested positive by an enclosing scf.if (the
// range analysis alone does not use the test). Tapes of 8 and 14 slots.
// CHECK: remark: loop reversed with a tape of 8 (a bound of its trip count proven from the ranges of its bounds) slots per enclosing iteration
// CHECK: remark: loop reversed with a tape of 14 (a bound of its trip count proven from the ranges of its bounds) slots per enclosing iteration
// CHECK-LABEL: func.func private @__nabla_vjp_ranged_dcc(
// CHECK-NOT: nabla.tape
func.func @ranged(%A: memref<?xf32>, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c14 = arith.constant 14 : index
  %c16 = arith.constant 16 : index
  %m = arith.minsi %n, %c8 : index
  scf.for %j = %c0 to %m step %c1 {
    %x = memref.load %A[%j] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %A[%j] : memref<?xf32>
  }
  %b = arith.minsi %k, %c16 : index
  %pos = arith.cmpi sgt, %b, %c0 : index
  scf.if %pos {
    %u = arith.andi %b, %c14 : index
    scf.for %j = %c0 to %u step %c1 {
      %x = memref.load %A[%j] : memref<?xf32>
      %y = math.sin %x : f32
      memref.store %y, %A[%j] : memref<?xf32>
    }
  }
  return
}
func.func @grad_ranged(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index, %k: index) {
  nabla.autodiff @ranged(%A, %dA, %n, %k)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, index, index) -> ()
  return
}

// -----

// The outer loop overwrites a private tile its snapshots could hold, but the
// loop inside it reads the tile for a run-time count with no known range:
// while the outer loop's checkpoints were recomputed, the inner one could be
// neither snapshotted nor taped. Both are taped in global memory instead.
// CHECK: remark: loop reversed with a global-memory tape of {{[0-9]+}} bytes per iteration and thread, its trip count known at run time
// CHECK: remark: loop reversed with a global-memory tape of {{[0-9]+}} bytes per iteration and thread, its trip count known at run time
// CHECK-NOT: binomial checkpointing
// CHECK-LABEL: func.func private @__nabla_vjp_nested_dcc(
func.func @nested(%A: memref<?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %tile = memref.alloca() : memref<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %A[%i] : memref<?xf32>
    memref.store %x, %tile[%c0] : memref<4xf32>
    %s = scf.for %j = %c0 to %m step %c1 iter_args(%t = %acc) -> f32 {
      %v = memref.load %tile[%c0] : memref<4xf32>
      %w = arith.mulf %v, %t : f32
      %u = math.sin %w : f32
      scf.yield %u : f32
    }
    scf.yield %s : f32
  }
  memref.store %r, %A[%c0] : memref<?xf32>
  return
}
func.func @grad_nested(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index, %m: index) {
  nabla.autodiff @nested(%A, %dA, %n, %m)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, index, index) -> ()
  return
}

// -----

// A proven bound too large for a private tape (min(n, 5000) slots of 4 bytes
// over the 4096-byte budget): the global tape, sized by the real trip count.
// CHECK: remark: loop reversed with a global-memory tape of 4 bytes per iteration and thread, its trip count known at run time
// CHECK-NOT: proven from the ranges
// CHECK-LABEL: func.func private @__nabla_vjp_large_range_dc(
// CHECK: nabla.tape
func.func @large_range(%A: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5000 = arith.constant 5000 : index
  %m = arith.minsi %n, %c5000 : index
  scf.for %j = %c0 to %m step %c1 {
    %x = memref.load %A[%j] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %A[%j] : memref<?xf32>
  }
  return
}
func.func @grad_large_range(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) {
  nabla.autodiff @large_range(%A, %dA, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}
