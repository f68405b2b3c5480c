// Loops reversed by their Jacobian, preaccumulated in forward mode
// (LoopPreaccumulation.cpp): a trip count from a parameter, a scalar state
// and a body of pure float ops carry the Jacobian's entries; the reverse
// sweep reads them back instead of recomputing.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate=remarks=true -verify-diagnostics | FileCheck %s

// A trip count from a parameter, a scalar state and a body of pure float ops
// (no memory, no nested region): the forward loop carries the state's
// tangents along two columns (the initial state and the input %x the body
// reads), the Jacobian goes to 2 slots, and the reverse sweep multiplies the
// result's adjoint by it: no tape, no checkpoints, no scf.while.
// CHECK-LABEL: func.func private @__nabla_vjp_preaccumulated_aca_a
// CHECK: %[[J:.*]] = memref.alloca() : memref<2xi32>
// CHECK: %[[LOOP:.*]]:3 = scf.for %{{.*}} iter_args(%[[A:.*]] = %{{.*}}, %[[DA0:.*]] = %{{.*}}, %[[DX:.*]] = %{{.*}}) -> (f32, f32, f32)
// CHECK: math.cos %[[A]]
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %[[J]]
// CHECK: memref.store %{{.*}}, %[[J]]
// CHECK-NOT: scf.while
// CHECK: memref.load %[[J]]
// CHECK: memref.load %[[J]]
// CHECK: return
func.func @preaccumulated(%x: f32, %m: index, %y: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @below {{loop reversed by its Jacobian, preaccumulated in forward mode (1 state x 2 columns): 8 bytes per thread}}
  %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %y) -> (f32) {
    %s = math.sin %a : f32
    %t = arith.mulf %s, %x : f32
    scf.yield %t : f32
  }
  return %r : f32
}
func.func @g(%x: f32, %m: index, %y: f32, %s: f32) -> (f32, f32) {
  %d:3 = nabla.autodiff @preaccumulated(%x, %m, %y, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>, #nabla.activity<active>], ret_activity = [#nabla.activity<active>]} : (f32, index, f32, f32) -> (f32, f32, f32)
  return %d#1, %d#2 : f32, f32
}
