// Split mode: a request marked nabla.split = "augmented" / "reverse" calls
// one half of a reverse-mode derivative cut where its forward sweep ends.
// Both halves lay out the same tape slots in the same order; the augmented
// forward stores the scalars the reverse needs, the reverse loads them.
// RUN: nabla-opt %s --nabla-differentiate -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func private @__nabla_aug_f_dc(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[LOOP:.*]] = nabla.tape %{{.*}} {nabla.split_tape} : memref<?xi32>
// CHECK: %[[SUM:.*]] = scf.for
// CHECK: memref.store %{{.*}}, %[[LOOP]][%{{.*}}] : memref<?xi32>
// CHECK: memref.store %{{.*}}, %[[A]][%{{.*}}] : memref<?xf32>
// The sum crosses the cut: a slot of its own.
// CHECK: %[[SLOT:.*]] = nabla.tape %{{.*}} {nabla.split_tape} : memref<?xi32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK: memref.store %[[BITS]], %[[SLOT]][%{{.*}}] : memref<?xi32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @__nabla_rev_f_dc(
// CHECK: nabla.tape %{{.*}} {nabla.split_tape} : memref<?xi32>
// CHECK: %[[LOOP2:.*]] = nabla.tape %{{.*}} {nabla.split_tape} : memref<?xi32>
// CHECK-NOT: scf.for
// CHECK: %[[SLOT2:.*]] = nabla.tape %{{.*}} {nabla.split_tape} : memref<?xi32>
// CHECK: memref.load %[[SLOT2]]
// CHECK: scf.for
// CHECK: memref.load %[[LOOP2]]
// CHECK-LABEL: func.func @fwd(
// CHECK: call @__nabla_aug_f_dc(
// CHECK-LABEL: func.func @rev(
// CHECK: call @__nabla_rev_f_dc(
func.func @f(%A: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    %t = arith.addf %acc, %y : f32
    scf.yield %t : f32
  }
  %q = arith.mulf %s, %s : f32
  memref.store %q, %A[%c0] : memref<?xf32>
  return
}
func.func @fwd(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) {
  nabla.autodiff @f(%A, %dA, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = [],
       nabla.split = "augmented"} : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}
func.func @rev(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) {
  nabla.autodiff @f(%A, %dA, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = [],
       nabla.split = "reverse"} : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}

// -----

// A while loop (not a counted do-while) is only checkpointed, which the
// reverse half cannot do.
func.func @g(%A: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %x0 = memref.load %A[%c0] : memref<?xf32>
  // expected-error @below {{'scf.while' op cannot be reversed in split mode: a while loop is only checkpointed}}
  %r = scf.while (%x = %x0) : (f32) -> f32 {
    %ten = arith.constant 10.0 : f32
    %go = arith.cmpf olt, %x, %ten : f32
    scf.condition(%go) %x : f32
  } do {
  ^bb0(%y: f32):
    %two = arith.constant 2.0 : f32
    %y2 = arith.mulf %y, %two : f32
    scf.yield %y2 : f32
  }
  memref.store %r, %A[%c0] : memref<?xf32>
  return
}
func.func @g_fwd(%A: memref<?xf32>, %dA: memref<?xf32>) {
  nabla.autodiff @g(%A, %dA)
      {activity = [#nabla.activity<dup>], ret_activity = [],
       nabla.split = "augmented"} : (memref<?xf32>, memref<?xf32>) -> ()
  return
}

// -----

func.func @h(%x: f32) -> f32 {
  return %x : f32
}
func.func @h_grad(%x: f32, %s: f32) -> f32 {
  // expected-error @below {{nabla.split must be "augmented" or "reverse", got "forward"}}
  %d = nabla.autodiff @h(%x, %s)
      {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>],
       nabla.split = "forward"} : (f32, f32) -> f32
  return %d : f32
}

// -----

// A function returning a value has no place for it in split mode.
func.func @k(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
func.func @k_grad(%x: f32, %s: f32) -> f32 {
  // expected-error @below {{cannot be split: split mode differentiates functions returning nothing (a kernel's body); @k returns values}}
  %d = nabla.autodiff @k(%x, %s)
      {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>],
       nabla.split = "reverse"} : (f32, f32) -> f32
  return %d : f32
}

// -----

// A private buffer's shadow, which the forward sweep only zeroes, is made
// again, zeroed, by the reverse half; the primal buffer's values are taped.
// CHECK-LABEL: func.func private @__nabla_rev_p_d(
// CHECK: %[[SHADOW:.*]] = memref.alloca() : memref<4xf32>
// CHECK: scf.for
// CHECK-NEXT: memref.store %{{.*}}, %[[SHADOW]][%{{.*}}] : memref<4xf32>
// CHECK: memref.load %[[SHADOW]]
func.func @p(%A: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %buf = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %A[%i] : memref<?xf32>
    memref.store %x, %buf[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %buf[%i] : memref<4xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %A[%i] : memref<?xf32>
  }
  return
}
func.func @p_rev(%A: memref<?xf32>, %dA: memref<?xf32>) {
  nabla.autodiff @p(%A, %dA)
      {activity = [#nabla.activity<dup>], ret_activity = [],
       nabla.split = "reverse"} : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
