// Every diagnostic of nabla.autodiff / nabla.fwddiff, one case each.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: f32) -> f32 {
  return %x : f32
}
func.func @g() {
  %x = arith.constant 1.0 : f32
  // An activity keyword that does not exist.
  // expected-error @below {{expected ::nabla::Activity to be one of: const, dup, dupnoneed, active, activenoneed}}
  // expected-error @below {{failed to parse Nabla_ActivityAttr parameter 'value'}}
  %r = nabla.autodiff @f(%x) {activity = [#nabla.activity<sideways>], ret_activity = []} : (f32) -> f32
  return
}

// -----

func.func @f(%x: f32) {
  return
}
func.func @g(%x: f32) {
  // The activity list holds something that is not an activity.
  // expected-error @below {{attribute 'activity' failed to satisfy constraint: array of activities}}
  nabla.autodiff @f(%x) {activity = [1 : i32], ret_activity = []} : (f32) -> ()
  return
}

// -----

func.func @f(%x: f32) {
  return
}
func.func @g(%x: f32) {
  // activenoneed is a result activity only.
  // expected-error @below {{'nabla.autodiff' op activity of argument #0: 'activenoneed' applies to results only; use 'active' for an argument}}
  nabla.autodiff @f(%x) {activity = [#nabla.activity<activenoneed>], ret_activity = []} : (f32) -> ()
  return
}

// -----

func.func @f(%m: memref<f32>) -> memref<f32> {
  return %m : memref<f32>
}
func.func @g(%m: memref<f32>) {
  // Reverse mode does not take dup results.
  // expected-error @below {{'nabla.autodiff' op ret_activity of result #0: reverse mode takes 'const', 'active' or 'activenoneed' results, not 'dup'}}
  nabla.autodiff @f(%m) {activity = [#nabla.activity<const>], ret_activity = [#nabla.activity<dup>]} : (memref<f32>) -> ()
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}
func.func @g(%x: f32) {
  // Forward mode uses dup for scalars.
  // expected-error @below {{'nabla.fwddiff' op activity of argument #0: forward mode takes 'dup' for a differentiable scalar, not 'active'}}
  %y = nabla.fwddiff @f(%x) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<const>]} : (f32) -> f32
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}
func.func @g(%x: f32) {
  // Forward mode has no active results.
  // expected-error @below {{'nabla.fwddiff' op ret_activity of result #0: forward mode takes 'dup' for a differentiable result, not 'activenoneed'}}
  nabla.fwddiff @f(%x) {activity = [#nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (f32) -> ()
  return
}

// -----

func.func @g(%x: f32) {
  // The callee does not exist.
  // expected-error @below {{'nabla.autodiff' op callee @missing does not reference a symbol in the nearest symbol table}}
  nabla.autodiff @missing(%x) {activity = [#nabla.activity<const>], ret_activity = []} : (f32) -> ()
  return
}

// -----

memref.global "private" @table : memref<4xf32>
func.func @g(%x: f32) {
  // The callee is a symbol but not a function.
  // expected-error @below {{'nabla.autodiff' op callee @table is not function-like (it is a 'memref.global')}}
  nabla.autodiff @table(%x) {activity = [#nabla.activity<const>], ret_activity = []} : (f32) -> ()
  return
}

// -----

func.func @f(%x: f32, %y: f32) {
  return
}
func.func @g(%x: f32) {
  // One activity per callee argument.
  // expected-error @below {{'nabla.autodiff' op expects 2 activities (one per argument of @f), got 1}}
  nabla.autodiff @f(%x) {activity = [#nabla.activity<const>], ret_activity = []} : (f32) -> ()
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}
func.func @g(%x: f32) {
  // One ret_activity per callee result.
  // expected-error @below {{'nabla.autodiff' op expects 1 ret_activities (one per result of @f), got 0}}
  nabla.autodiff @f(%x) {activity = [#nabla.activity<const>], ret_activity = []} : (f32) -> ()
  return
}

// -----

func.func @f(%m: memref<?xf32>) {
  return
}
func.func @g(%m: memref<?xf32>) {
  // active on memory.
  // expected-error @below {{'nabla.autodiff' op activity of argument #0: 'active' requires a floating-point scalar, vector or complex type, got memref<?xf32> (use 'dup' for memory)}}
  %d = nabla.autodiff @f(%m) {activity = [#nabla.activity<active>], ret_activity = []} : (memref<?xf32>) -> memref<?xf32>
  return
}

// -----

func.func @f(%k: i32) {
  return
}
func.func @g(%k: i32) {
  // active on an integer.
  // expected-error @below {{'nabla.autodiff' op activity of argument #0: 'active' requires a floating-point scalar, vector or complex type, got i32}}
  %d = nabla.autodiff @f(%k) {activity = [#nabla.activity<active>], ret_activity = []} : (i32) -> i32
  return
}

// -----

func.func @f(%x: f32) {
  return
}
func.func @g(%x: f32, %dx: f32) {
  // In reverse mode a scalar has no memory to accumulate into.
  // expected-error @below {{'nabla.autodiff' op activity of argument #0: 'dup' on a scalar has no memory to accumulate into in reverse mode; use 'active' for f32}}
  nabla.autodiff @f(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = []} : (f32, f32) -> ()
  return
}

// -----

func.func @f(%i: index) {
  return
}
func.func @g(%i: index) {
  // dupnoneed on an index in reverse mode.
  // expected-error @below {{'nabla.autodiff' op activity of argument #0: 'dupnoneed' requires a memref or pointer, got index}}
  nabla.autodiff @f(%i, %i) {activity = [#nabla.activity<dupnoneed>], ret_activity = []} : (index, index) -> ()
  return
}

// -----

func.func @f(%k: i32) {
  return
}
func.func @g(%k: i32) {
  // dup on an integer in forward mode.
  // expected-error @below {{'nabla.fwddiff' op activity of argument #0: 'dup' requires a memref, pointer or floating-point type, got i32}}
  nabla.fwddiff @f(%k, %k) {activity = [#nabla.activity<dup>], ret_activity = []} : (i32, i32) -> ()
  return
}

// -----

func.func @f(%x: f32) -> i32 {
  %c = arith.constant 0 : i32
  return %c : i32
}
func.func @g(%x: f32, %s: i32) {
  // An integer result cannot be active.
  // expected-error @below {{'nabla.autodiff' op ret_activity of result #0: 'active' requires a floating-point scalar, vector or complex type, got i32}}
  %r, %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]} : (f32, i32) -> (i32, f32)
  return
}

// -----

func.func @f(%x: f32) -> index {
  %c = arith.constant 0 : index
  return %c : index
}
func.func @g(%x: f32, %dx: f32) {
  // An index result has no tangent.
  // expected-error @below {{'nabla.fwddiff' op ret_activity of result #0: 'dupnoneed' requires a memref, pointer or floating-point type, got index}}
  %t = nabla.fwddiff @f(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dupnoneed>]} : (f32, f32) -> index
  return
}

// -----

func.func @f(%m: memref<?xf32>, %n: index) {
  return
}
func.func @g(%m: memref<?xf32>, %n: index) {
  // The shadow operand is missing.
  // expected-error @below {{'nabla.autodiff' op expects 3 operands (primal argument #0, shadow of argument #0, primal argument #1) for callee @f, got 2}}
  nabla.autodiff @f(%m, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, index) -> ()
  return
}

// -----

func.func @f(%m: memref<?xf32>) {
  return
}
func.func @g(%m: memref<?xf32>, %dm: memref<?xf64>) {
  // The shadow must have the primal's type.
  // expected-error @below {{'nabla.autodiff' op operand #1 (shadow of argument #0) has type 'memref<?xf64>', but the callee expects 'memref<?xf32>'}}
  nabla.autodiff @f(%m, %dm) {activity = [#nabla.activity<dup>], ret_activity = []} : (memref<?xf32>, memref<?xf64>) -> ()
  return
}

// -----

func.func @f(%x: f32) -> f64 {
  %y = arith.extf %x : f32 to f64
  return %y : f64
}
func.func @g(%x: f32, %s: f32) {
  // The seed has the type of the callee result it belongs to.
  // expected-error @below {{'nabla.autodiff' op operand #1 (seed of result #0) has type 'f32', but the callee expects 'f64'}}
  %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}
func.func @g(%x: f32, %s: f32) {
  // The gradient of the active argument is missing.
  // expected-error @below {{'nabla.autodiff' op expects 2 results (primal result #0, gradient of argument #0) for callee @f, got 1}}
  %y = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]} : (f32, f32) -> f32
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}
func.func @g(%x: f32, %dx: f32) {
  // The tangent has the type of its callee result.
  // expected-error @below {{'nabla.fwddiff' op result #1 (tangent of result #0) has type 'f64', but the callee expects 'f32'}}
  %y, %dy = nabla.fwddiff @f(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]} : (f32, f32) -> (f32, f64)
  return
}

// -----

func.func private @f(f32) -> f32
func.func private @f_vjp(f32, f32) -> f32
// The rule's signature must be the expanded one: (x, seed) -> (y, dx).
// expected-error @below {{'nabla.custom_derivative' op rule @f_vjp has type '(f32, f32) -> f32', but a reverse derivative of @f with these activities has type '(f32, f32) -> (f32, f32)'}}
nabla.custom_derivative @f reverse @f_vjp {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}

// -----

func.func private @f(f32) -> f32
// expected-error @below {{'nabla.custom_derivative' op rule @nowhere does not reference a function-like symbol}}
nabla.custom_derivative @f forward @nowhere {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]}

// -----

func.func private @f(f32) -> f32
func.func private @f_jvp(f32, f32) -> (f32, f32)
// expected-error @below {{'nabla.custom_derivative' op activity of argument #0: forward mode takes 'dup' for a differentiable scalar, not 'active'}}
nabla.custom_derivative @f forward @f_jvp {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<dup>]}

// -----

func.func private @f(f32, f32) -> f32
func.func private @f_jvp(f32, f32) -> (f32, f32)
// expected-error @below {{'nabla.custom_derivative' op expects one activity per argument and result of @f}}
nabla.custom_derivative @f forward @f_jvp {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]}

// -----

gpu.module @kernels {
  func.func @f(%A: memref<?xf32>) {
    return
  }
  // expected-error @below {{'nabla.kernel_adjoint' op @f does not reference a gpu.func kernel}}
  nabla.kernel_adjoint @f -> @df {activity = [#nabla.activity<dup>]}
}

// -----

gpu.module @kernels {
  gpu.func @k(%A: memref<?xf32>) kernel {
    gpu.return
  }
  gpu.func @dk(%A: memref<?xf32>) kernel {
    gpu.return
  }
  // expected-error @below {{'nabla.kernel_adjoint' op adjoint @dk names a symbol that already exists}}
  nabla.kernel_adjoint @k -> @dk {activity = [#nabla.activity<dup>]}
}

// -----

gpu.module @kernels {
  gpu.func @k(%A: memref<?xf32>) kernel {
    gpu.return
  }
  // expected-error @below {{'nabla.kernel_adjoint' op expects one activity per parameter of @k (1), got 2}}
  nabla.kernel_adjoint @k -> @dk {activity = [#nabla.activity<dup>, #nabla.activity<const>]}
}

// -----

gpu.module @kernels {
  gpu.func @k(%s: f32) kernel {
    gpu.return
  }
  // expected-error @below {{'nabla.kernel_adjoint' op activity of parameter #0: a kernel returns nothing, so a scalar parameter has nowhere to put its gradient (pass it in a buffer marked dup)}}
  nabla.kernel_adjoint @k -> @dk {activity = [#nabla.activity<active>]}
}

// -----

gpu.module @kernels {
  gpu.func @k(%s: f32) kernel {
    gpu.return
  }
  // expected-error @below {{'nabla.kernel_adjoint' op activity of parameter #0: a kernel returns nothing, so a scalar parameter has nowhere to put its gradient (pass it in a buffer marked dup)}}
  nabla.kernel_adjoint @k -> @dk {activity = [#nabla.activity<dup>]}
}

// -----

// The trip-count hint is a positive integer.
func.func @hint_zero(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'scf.for' op attribute 'nabla.max_trip_count' must be a positive integer}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {
    scf.yield %a : f32
  } {nabla.max_trip_count = 0 : i64}
  return %r : f32
}

// -----

// A while has no trip count to bound.
func.func @hint_on_while(%x: f32) -> f32 {
  // expected-error @below {{'scf.while' op attribute 'nabla.max_trip_count' belongs on an scf.for}}
  %r = scf.while (%a = %x) : (f32) -> f32 {
    %t = arith.constant true
    scf.condition(%t) %a : f32
  } do {
  ^bb0(%b: f32):
    scf.yield %b : f32
  } attributes {nabla.max_trip_count = 4 : i64}
  return %r : f32
}

// -----

// Snapshots are for loops.
func.func @checkpoints_on_function(%x: f32) -> f32 attributes {nabla.checkpoints = 4 : i64} {
  // expected-error @above {{'func.func' op attribute 'nabla.checkpoints' belongs on an scf.for or scf.while}}
  return %x : f32
}

// -----

func.func @checkpoints_not_integer(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'scf.for' op attribute 'nabla.checkpoints' must be a positive integer}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {
    scf.yield %a : f32
  } {nabla.checkpoints = "many"}
  return %r : f32
}

// -----

gpu.module @m {
  gpu.func @k(%x: memref<?xf32>, %n: index) kernel { gpu.return }
  // expected-error @below {{'nabla.kernel_tangent' op expects one activity per parameter of @k (2), got 1}}
  nabla.kernel_tangent @k -> @tk {activity = [#nabla.activity<dup>]}
}

// -----

gpu.module @m {
  gpu.func @k(%x: memref<?xf32>, %a: f32) kernel { gpu.return }
  // expected-error @below {{'nabla.kernel_tangent' op activity of parameter #1: a kernel returns nothing}}
  nabla.kernel_tangent @k -> @tk {activity = [#nabla.activity<dup>, #nabla.activity<active>]}
}

// -----

gpu.module @m {
  gpu.func @k(%x: memref<?xf32>) kernel { gpu.return }
  gpu.func @tk(%x: memref<?xf32>) kernel { gpu.return }
  // expected-error @below {{'nabla.kernel_tangent' op tangent @tk names a symbol that already exists}}
  nabla.kernel_tangent @k -> @tk {activity = [#nabla.activity<dup>]}
}

// -----

func.func @fence_scope() {
  // expected-error @below {{'nabla.memory_fence' op scope must be workgroup, device or system, got 'cluster'}}
  nabla.memory_fence "cluster"
  return
}
