// Enzyme's rule for constant memory: a differentiated value stored into a
// buffer the request marks const (`enzyme_const`) is inactive there. The
// primal store stays, the derivative does not flow through the buffer, and a
// remark says so (it used to be an error).
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-differentiate | FileCheck %s

// Reverse mode: x's gradient only has the path through y; B gets x * x.
// CHECK-LABEL: func.func private @__nabla_vjp_f
// CHECK: %[[SQ:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: memref.store %[[SQ]], %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK: return
func.func @f(%x: f32, %B: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %sq = arith.mulf %x, %x : f32
  // expected-remark @below {{stores a differentiated value into a buffer without a shadow (marked const): the buffer is inactive, as in Enzyme}}
  memref.store %sq, %B[%c0] : memref<4xf32>
  %y = arith.addf %x, %x : f32
  return %y : f32
}
func.func @g(%x: f32, %B: memref<4xf32>, %s: f32) -> f32 {
  %d = nabla.autodiff @f(%x, %B, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, memref<4xf32>, f32) -> f32
  return %d : f32
}

// -----

// Forward mode: the same remark for an atomic accumulation.
// CHECK-LABEL: func.func private @__nabla_jvp_h
// CHECK: memref.atomic_rmw addf
func.func @h(%x: f32, %B: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{accumulates a differentiated value into a buffer without a shadow (marked const)}}
  %o = memref.atomic_rmw addf %x, %B[%c0] : (f32, memref<4xf32>) -> f32
  return
}
func.func @k(%x: f32, %dx: f32, %B: memref<4xf32>) {
  nabla.fwddiff @h(%x, %dx, %B) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (f32, f32, memref<4xf32>) -> ()
  return
}
