// Enzyme's split calls with a caller-allocated tape: nabla.split_tape_bytes
// becomes the constant bytes of the tape, nabla.split_autodiff a call of the
// half whose slots are words from the caller's pointer on (bytes of an i8
// tape, elements of an i32/f32 one), contiguous for one call.
// RUN: nabla-opt %s --nabla-differentiate -split-input-file -verify-diagnostics | FileCheck %s

// The accumulator and the loaded value of each of four iterations, and the
// sum: 9 words, 36 bytes.
// CHECK-LABEL: func.func private @__nabla_aug_f_dc_tape_i8(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[N:.*]]: index, %[[TAPE:.*]]: memref<?xi8>, %[[AT:.*]]: index)
// CHECK-NOT: nabla.tape
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: memref.store %{{.*}}, %[[TAPE]][%{{.*}}] : memref<?xi8>
// CHECK-LABEL: func.func private @__nabla_rev_f_dc_tape_f32(
// CHECK-SAME: %[[TAPE2:[^:]*]]: memref<?xf32>, %[[AT2:[^:]*]]: index)
// CHECK: memref.load %[[TAPE2]][%{{.*}}] : memref<?xf32>
// CHECK-LABEL: func.func @size(
// CHECK: %[[BYTES:.*]] = arith.constant 36 : index
// CHECK: return %[[BYTES]]
// CHECK-LABEL: func.func @fwd(
// CHECK: call @__nabla_aug_f_dc_tape_i8(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32>, memref<?xf32>, index, memref<?xi8>, index) -> ()
func.func @f(%A: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    %t = arith.addf %acc, %y : f32
    scf.yield %t : f32
  }
  %q = arith.mulf %s, %s : f32
  memref.store %q, %A[%n] : memref<?xf32>
  return
}
func.func @size() -> index {
  %b = nabla.split_tape_bytes @f {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : index
  return %b : index
}
func.func @fwd(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index, %tape: memref<?xi8>, %at: index) {
  nabla.split_autodiff "augmented" @f(%A, %dA, %n) tape(%tape[%at] : memref<?xi8>)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}
func.func @rev(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index, %tape: memref<?xf32>, %at: index) {
  nabla.split_autodiff "reverse" @f(%A, %dA, %n) tape(%tape[%at] : memref<?xf32>)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}

// -----

// A run-time trip count has no size known at compile time.
func.func @g(%A: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-note @below {{its slots; the kernel-level split form}}
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    %t = arith.addf %acc, %y : f32
    scf.yield %t : f32
  }
  memref.store %s, %A[%c0] : memref<?xf32>
  return
}
func.func @g_size() -> index {
  // expected-error @below {{needs a caller-allocated tape of a size known at compile time}}
  %b = nabla.split_tape_bytes @g {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : index
  return %b : index
}
