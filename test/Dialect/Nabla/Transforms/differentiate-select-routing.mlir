// Partials that choose an operand (select, max, min) route the derivative
// with a select, never a multiplication by 0 or 1: an infinite or NaN
// derivative of the operand not chosen is dropped (Enzyme's select rule),
// not turned into 0 * inf = NaN.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate | FileCheck %s

// The tangent: each operand's tangent where it is chosen.
// CHECK-LABEL: func.func private @__nabla_jvp_pick_cdd_d(
// CHECK-SAME: %[[C:.*]]: i1, %[[A:.*]]: f32, %[[TA:.*]]: f32, %[[B:.*]]: f32, %[[TB:.*]]: f32)
// CHECK-DAG: arith.select %[[C]], %[[TA]], %{{.*}} : f32
// CHECK-DAG: arith.select %[[C]], %{{.*}}, %[[TB]] : f32
// CHECK-NOT: arith.mulf
// CHECK: return
// CHECK-LABEL: func.func private @__nabla_vjp_pick_caa_a(
// CHECK-SAME: %[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32, %[[S:.*]]: f32)
// CHECK-DAG: %[[DA:.*]] = arith.select %[[C]], %[[S]], %{{.*}} : f32
// CHECK-DAG: %[[DB:.*]] = arith.select %[[C]], %{{.*}}, %[[S]] : f32
// CHECK-NOT: arith.mulf
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]
func.func @pick(%c: i1, %a: f32, %b: f32) -> f32 {
  %r = arith.select %c, %a, %b : f32
  return %r : f32
}
func.func @use(%c: i1, %a: f32, %b: f32, %ta: f32, %tb: f32, %s: f32)
    -> (f32, f32, f32, f32, f32) {
  %y, %da, %db = nabla.autodiff @pick(%c, %a, %b, %s)
      {activity = [#nabla.activity<const>, #nabla.activity<active>, #nabla.activity<active>],
       ret_activity = [#nabla.activity<active>]} : (i1, f32, f32, f32) -> (f32, f32, f32)
  %p, %t = nabla.fwddiff @pick(%c, %a, %ta, %b, %tb)
      {activity = [#nabla.activity<const>, #nabla.activity<dup>, #nabla.activity<dup>],
       ret_activity = [#nabla.activity<dup>]} : (i1, f32, f32, f32, f32) -> (f32, f32)
  return %y, %da, %db, %p, %t : f32, f32, f32, f32, f32
}

// -----

// max routes to the operand that won (ties to the first) the same way.
// CHECK-LABEL: func.func private @__nabla_vjp_relu_a_a(
// CHECK-SAME: %[[X:.*]]: f32, %[[S:.*]]: f32)
// CHECK: %[[WON:.*]] = arith.cmpf oge, %[[X]], %{{.*}} : f32
// CHECK: %[[DX:.*]] = arith.select %[[WON]], %[[S]], %{{.*}} : f32
// CHECK-NOT: arith.mulf
// CHECK: return %{{.*}}, %[[DX]]
func.func @relu(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %r = arith.maxnumf %x, %zero : f32
  return %r : f32
}
func.func @use_relu(%x: f32, %s: f32) -> (f32, f32) {
  %y, %dx = nabla.autodiff @relu(%x, %s)
      {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}
      : (f32, f32) -> (f32, f32)
  return %y, %dx : f32, f32
}
