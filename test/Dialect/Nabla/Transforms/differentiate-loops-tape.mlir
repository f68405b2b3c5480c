// Loops reversed with per-thread tapes (LoopTape.cpp): constant bounds,
// the nabla.max_trip_count hint (the reverse sweep checks the trip count
// against it and poisons past it), and a reduction tree's levels around
// barriers.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate=remarks=true -verify-diagnostics | FileCheck %s

// Constant bounds: a tape of 5 slots for the iter_arg (f32); sin is
// recomputed from the iter_arg, the induction variable from the slot (no
// tape for it). (With tape-budget=0 it is checkpointed:
// differentiate-loops-budget.mlir.)
// CHECK-LABEL: func.func private @__nabla_vjp_constant_a_a
// CHECK-NOT: memref<5x2xi32>
// CHECK-DAG: memref.alloca() : memref<5xi32>
// CHECK-NOT: scf.while
// CHECK: return
func.func @constant(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  // expected-remark @below {{loop reversed with a tape of 5 slots per enclosing iteration: 20 bytes per thread}}
  %r = scf.for %k = %c0 to %c5 step %c1 iter_args(%a = %x) -> (f32) {
    %s = math.sin %a : f32
    scf.yield %s : f32
  }
  return %r : f32
}
func.func @g(%x: f32, %s: f32) -> f32 {
  %d:2 = nabla.autodiff @constant(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]} : (f32, f32) -> (f32, f32)
  return %d#1 : f32
}

// -----
// A hint tapes a dynamic loop; the reverse sweep compares the trip count
// with it and poisons the adjoints with NaN when it is exceeded.
// CHECK-LABEL: func.func private @__nabla_vjp_hinted_ac_a
// CHECK: arith.cmpi ugt, %{{.*}}, %[[HINT:.*]] : index
// CHECK: arith.constant 0x7FC00000 : f32
// CHECK: arith.select
func.func @hinted(%x: f32, %m: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @below {{loop reversed with a tape of 16 (nabla.max_trip_count) slots per enclosing iteration: 64 bytes per thread}}
  %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %x) -> (f32) {
    %s = math.sin %a : f32
    scf.yield %s : f32
  } {nabla.max_trip_count = 16 : i64}
  return %r : f32
}
func.func @g(%x: f32, %m: index, %s: f32) -> f32 {
  %d:2 = nabla.autodiff @hinted(%x, %m, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<active>]} : (f32, index, f32) -> (f32, f32)
  return %d#1 : f32
}

// -----
// A tree level's partner index t + s, computed inside the level's scf.if from
// the induction variable and the thread id, is recomputed by the reverse loop
// (pure and speculatable: it may run outside its branch), not taped; nor is
// the induction variable (lb + slot * step). Only the loaded floats get slots,
// which the sum's adjoint leaves unread (canonicalization erases them). The
// thread stores tile[t] between the same barriers as it reads it, so its
// accumulation into the shadow of tile[t] is plain; the partner's is atomic.
// CHECK-LABEL: func.func private @__nabla_vjp_tree_d
// CHECK-NOT: memref<6x2xi32>
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: %[[LEVEL:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[S:.*]] = arith.shrui %{{.*}}, %[[LEVEL]] : index
// CHECK-NEXT: arith.cmpi ult, %{{.*}}, %[[S]] : index
// CHECK-NEXT: %[[PARTNER:.*]] = arith.addi %{{.*}}, %[[S]] : index
// CHECK-NEXT: gpu.barrier
// CHECK: memref.atomic_rmw addf %{{.*}}, %{{.*}}[%[[PARTNER]]]
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[DTILE:.*]][%[[T:.*]]] : memref<64xf32
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK-NEXT: memref.store %[[NEW]], %[[DTILE]][%[[T]]]
func.func @tree(%tile: memref<64xf32, #gpu.address_space<workgroup>>) {
  %t = gpu.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c32 = arith.constant 32 : index
  // expected-remark @below {{loop reversed with a tape of 6 slots per enclosing iteration: 48 bytes per thread}}
  scf.for %k = %c0 to %c6 step %c1 {
    %s = arith.shrui %c32, %k : index
    %active = arith.cmpi ult, %t, %s : index
    scf.if %active {
      %j = arith.addi %t, %s : index
      %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      // expected-remark @below {{adjoint accumulation keeps an atomic}}
      %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
      %sum = arith.addf %a, %b : f32
      memref.store %sum, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
  }
  return
}
func.func @g(%tile: memref<64xf32, #gpu.address_space<workgroup>>, %dtile: memref<64xf32, #gpu.address_space<workgroup>>) {
  nabla.autodiff @tree(%tile, %dtile) {activity = [#nabla.activity<dup>], ret_activity = []} : (memref<64xf32, #gpu.address_space<workgroup>>, memref<64xf32, #gpu.address_space<workgroup>>) -> ()
  return
}
