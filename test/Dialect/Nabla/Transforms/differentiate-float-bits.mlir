// Floats moved as integer bits stay differentiated: nabla-differentiate turns
// shuffles and selects of a float's bits into float shuffles and selects (a
// double shuffled as two 32-bit halves into one 64-bit shuffle, sign masks
// into absf/negf) before the activity analysis.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate | FileCheck %s

// __shfl_xor_sync(~0u, __float_as_int(v), 1): the reverse sweep shuffles the
// seed back as a float and multiplies by 2x; nothing is dropped.
// CHECK-LABEL: func.func private @__nabla_vjp_shuffle_bits
// CHECK-SAME: (%[[X:.*]]: f32, %[[SEED:.*]]: f32)
// CHECK-NOT: arith.bitcast
// CHECK: %[[BACK:.*]], %{{.*}} = gpu.shuffle  xor %[[SEED]], %{{.*}}, %{{.*}} : f32
// CHECK: arith.mulf %[[BACK]], %[[X]] : f32
gpu.module @m {
  func.func @shuffle_bits(%x: f32) -> f32 {
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %v = arith.mulf %x, %x : f32
    %b = arith.bitcast %v : f32 to i32
    %s, %ok = gpu.shuffle xor %b, %c1, %c32 : i32
    %f = arith.bitcast %s : i32 to f32
    return %f : f32
  }
  func.func @d_shuffle_bits_request(%x: f32, %s: f32) -> f32 {
    %g = nabla.autodiff @shuffle_bits(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
    return %g : f32
  }
}

// -----

// A double shuffled as its two 32-bit halves (CUDA's __shfl_down_sync on a
// double) is one 64-bit shuffle.
// CHECK-LABEL: func.func private @__nabla_vjp_shuffle_halves
// CHECK-NOT: arith.trunci
// CHECK: gpu.shuffle  up %{{.*}}, %{{.*}}, %{{.*}} : f64
gpu.module @m {
  func.func @shuffle_halves(%x: f64) -> f64 {
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %c32i64 = arith.constant 32 : i64
    %b = arith.bitcast %x : f64 to i64
    %lo = arith.trunci %b : i64 to i32
    %h = arith.shrui %b, %c32i64 : i64
    %hi = arith.trunci %h : i64 to i32
    %slo, %ok0 = gpu.shuffle down %lo, %c1, %c32 : i32
    %shi, %ok1 = gpu.shuffle down %hi, %c1, %c32 : i32
    %zhi = arith.extui %shi : i32 to i64
    %shl = arith.shli %zhi, %c32i64 : i64
    %zlo = arith.extui %slo : i32 to i64
    %j = arith.ori %shl, %zlo : i64
    %f = arith.bitcast %j : i64 to f64
    %r = arith.addf %x, %f : f64
    return %r : f64
  }
  func.func @d_shuffle_halves_request(%x: f64, %s: f64) -> f64 {
    %g = nabla.autodiff @shuffle_halves(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f64, f64) -> f64
    return %g : f64
  }
}

// -----

// select(c, bits(x), 0) and sign masks on the bits.
// CHECK-LABEL: func.func private @__nabla_vjp_select_and_masks
// CHECK-NOT: arith.bitcast
// CHECK: math.absf
gpu.module @m {
  func.func @select_and_masks(%x: f32, %c: i1) -> f32 {
    %zero = arith.constant 0 : i32
    %abs = arith.constant 2147483647 : i32
    %sign = arith.constant -2147483648 : i32
    %b = arith.bitcast %x : f32 to i32
    %s = arith.select %c, %b, %zero : i32
    %a = arith.andi %s, %abs : i32
    %fa = arith.bitcast %a : i32 to f32
    %n = arith.xori %b, %sign : i32
    %fn = arith.bitcast %n : i32 to f32
    %r = arith.mulf %fa, %fn : f32
    return %r : f32
  }
  func.func @d_select_and_masks_request(%x: f32, %c: i1, %s: f32) -> f32 {
    %g = nabla.autodiff @select_and_masks(%x, %c, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, i1, f32) -> f32
    return %g : f32
  }
}

// -----

// An int buffer marked dup (Enzyme's default for pointers): its values
// converted to float are data, not a float's bits; the gradient is the
// loaded count.
// CHECK-LABEL: func.func private @__nabla_vjp_int_dup
// CHECK: %[[N:.*]] = memref.load
// CHECK: %[[NF:.*]] = arith.sitofp %[[N]] : i32 to f32
// CHECK: arith.mulf %{{.*}}, %[[NF]] : f32
func.func @int_dup(%x: f32, %N: memref<4xi32>) -> f32 {
  %c0 = arith.constant 0 : index
  %n = memref.load %N[%c0] : memref<4xi32>
  %nf = arith.sitofp %n : i32 to f32
  %y = arith.mulf %x, %nf : f32
  return %y : f32
}
func.func @g(%x: f32, %N: memref<4xi32>, %dN: memref<4xi32>, %s: f32) -> f32 {
  %d = nabla.autodiff @int_dup(%x, %N, %dN, %s) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, memref<4xi32>, memref<4xi32>, f32) -> f32
  return %d : f32
}
