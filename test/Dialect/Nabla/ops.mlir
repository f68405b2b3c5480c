// Round trips of nabla.autodiff and nabla.fwddiff: custom form, and the
// generic form parsed back into the custom form.
// RUN: nabla-opt %s -split-input-file | nabla-opt -split-input-file | FileCheck %s
// RUN: nabla-opt %s -split-input-file -mlir-print-op-generic | nabla-opt -split-input-file | FileCheck %s

// The seed's shape: a dup buffer and a const index, no results.
func.func @mul(%A: memref<?xf32>, %n: index) {
  return
}

// CHECK-LABEL: func.func @grad_mul(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[DA:.*]]: memref<?xf32>, %[[N:.*]]: index)
func.func @grad_mul(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) {
  // CHECK: nabla.autodiff @mul(%[[A]], %[[DA]], %[[N]]) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
  nabla.autodiff @mul(%A, %dA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                    ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}

// -----

// Reverse mode with active scalars: one seed per active result, the primal of
// an `active` result first, then one gradient per active argument.
func.func @prod(%x: f32, %y: f64) -> (f32, f64) {
  %c = arith.extf %x : f32 to f64
  %p = arith.mulf %c, %y : f64
  return %x, %p : f32, f64
}

// CHECK-LABEL: func.func @grad_prod(
// CHECK-SAME: %[[X:.*]]: f32, %[[Y:.*]]: f64, %[[S0:.*]]: f32, %[[S1:.*]]: f64)
func.func @grad_prod(%x: f32, %y: f64, %s0: f32, %s1: f64) -> (f32, f32, f64) {
  // CHECK: %[[R:.*]]:3 = nabla.autodiff @prod(%[[X]], %[[Y]], %[[S0]], %[[S1]])
  // CHECK-SAME: activity = [#nabla.activity<active>, #nabla.activity<active>]
  // CHECK-SAME: ret_activity = [#nabla.activity<active>, #nabla.activity<activenoneed>]
  // CHECK-SAME: : (f32, f64, f32, f64) -> (f32, f32, f64)
  %p, %gx, %gy = nabla.autodiff @prod(%x, %y, %s0, %s1)
      {activity = [#nabla.activity<active>, #nabla.activity<active>],
       ret_activity = [#nabla.activity<active>, #nabla.activity<activenoneed>]}
      : (f32, f64, f32, f64) -> (f32, f32, f64)
  return %p, %gx, %gy : f32, f32, f64
}

// -----

// dupnoneed buffers, const results, vector and complex actives.
func.func private @mixed(memref<4x4xf64>, vector<4xf32>, complex<f32>, i32) -> i32

// CHECK-LABEL: func.func @grad_mixed(
func.func @grad_mixed(%m: memref<4x4xf64>, %dm: memref<4x4xf64>, %v: vector<4xf32>,
                      %c: complex<f32>, %k: i32) -> (i32, vector<4xf32>, complex<f32>) {
  // CHECK: nabla.autodiff @mixed
  // CHECK-SAME: #nabla.activity<dupnoneed>, #nabla.activity<active>, #nabla.activity<active>, #nabla.activity<const>
  // CHECK-SAME: : (memref<4x4xf64>, memref<4x4xf64>, vector<4xf32>, complex<f32>, i32) -> (i32, vector<4xf32>, complex<f32>)
  %r, %gv, %gc = nabla.autodiff @mixed(%m, %dm, %v, %c, %k)
      {activity = [#nabla.activity<dupnoneed>, #nabla.activity<active>,
                   #nabla.activity<active>, #nabla.activity<const>],
       ret_activity = [#nabla.activity<const>]}
      : (memref<4x4xf64>, memref<4x4xf64>, vector<4xf32>, complex<f32>, i32) -> (i32, vector<4xf32>, complex<f32>)
  return %r, %gv, %gc : i32, vector<4xf32>, complex<f32>
}

// -----

// Forward mode: a dup scalar's shadow is its tangent; results interleave
// primal and tangent; dupnoneed results return the tangent only.
func.func private @f(f32, memref<?xf32>, index) -> (f32, f32, f64)

// CHECK-LABEL: func.func @jvp_f(
// CHECK-SAME: %[[X:.*]]: f32, %[[DX:.*]]: f32, %[[B:.*]]: memref<?xf32>, %[[DB:.*]]: memref<?xf32>, %[[N:.*]]: index)
func.func @jvp_f(%x: f32, %dx: f32, %b: memref<?xf32>, %db: memref<?xf32>, %n: index)
    -> (f32, f32, f32, f64) {
  // CHECK: %[[R:.*]]:4 = nabla.fwddiff @f(%[[X]], %[[DX]], %[[B]], %[[DB]], %[[N]])
  // CHECK-SAME: ret_activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<dupnoneed>]
  // CHECK-SAME: : (f32, f32, memref<?xf32>, memref<?xf32>, index) -> (f32, f32, f32, f64)
  %y0, %dy0, %y1, %dy2 = nabla.fwddiff @f(%x, %dx, %b, %db, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
       ret_activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<dupnoneed>]}
      : (f32, f32, memref<?xf32>, memref<?xf32>, index) -> (f32, f32, f32, f64)
  return %y0, %dy0, %y1, %dy2 : f32, f32, f32, f64
}

// -----

// Inside a kernel: the callee resolves in the nearest symbol table (the
// gpu.module), and pointers may be dup.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @scale(%p: !llvm.ptr<1>, %s: f32) {
      llvm.return
    }
    // CHECK-LABEL: gpu.func @grad_scale(
    gpu.func @grad_scale(%p: !llvm.ptr<1>, %dp: !llvm.ptr<1>, %s: f32) kernel {
      // CHECK: %{{.*}} = nabla.autodiff @scale(%{{.*}}, %{{.*}}, %{{.*}}) {activity = [#nabla.activity<dup>, #nabla.activity<active>], ret_activity = []} : (!llvm.ptr<1>, !llvm.ptr<1>, f32) -> f32
      %ds = nabla.autodiff @scale(%p, %dp, %s) {activity = [#nabla.activity<dup>, #nabla.activity<active>],
                                                ret_activity = []} : (!llvm.ptr<1>, !llvm.ptr<1>, f32) -> f32
      gpu.return
    }
  }
}

// -----

// A custom reverse rule and a custom forward rule for one function.
func.func private @fast_exp(f32) -> f32
func.func private @fast_exp_vjp(f32, f32) -> (f32, f32)
func.func private @fast_exp_jvp(f32, f32) -> (f32, f32)
// CHECK: nabla.custom_derivative @fast_exp reverse @fast_exp_vjp {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}
nabla.custom_derivative @fast_exp reverse @fast_exp_vjp {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}
// CHECK: nabla.custom_derivative @fast_exp forward @fast_exp_jvp {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]}
nabla.custom_derivative @fast_exp forward @fast_exp_jvp {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]}

// -----

// A whole-kernel adjoint request.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>, %n: index) kernel {
      gpu.return
    }
    // CHECK: nabla.kernel_adjoint @k -> @dk {activity = [#nabla.activity<dup>, #nabla.activity<const>]}
    nabla.kernel_adjoint @k -> @dk {activity = [#nabla.activity<dup>, #nabla.activity<const>]}
  }
}
