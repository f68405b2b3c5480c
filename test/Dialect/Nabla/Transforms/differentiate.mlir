// nabla-differentiate: generated functions, their sharing, Enzyme memory
// semantics and the inactive parts.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate | FileCheck %s

// The seed: the store's adjoint reads and zeroes the shadow; the load's
// adjoint is a plain load-add-store because the index is the global id.
// CHECK-LABEL: func.func private @__nabla_vjp_mul_dc(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[DA:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[I:.*]] = gpu.global_id x
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[N]]
// CHECK: scf.if %[[IN]]
// CHECK:   %[[X:.*]] = memref.load %[[A]][%[[I]]]
// CHECK:   %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK:   memref.store %[[SQ]], %[[A]][%[[I]]]
// CHECK: scf.if %[[IN]]
// CHECK:   %[[D:.*]] = memref.load %[[DA]][%[[I]]]
// CHECK:   memref.store %{{.*}}, %[[DA]][%[[I]]]
// CHECK:   %[[OLD:.*]] = memref.load %[[DA]][%[[I]]]
// CHECK:   memref.store %{{.*}}, %[[DA]][%[[I]]]
// CHECK-NOT: memref.atomic_rmw
// CHECK: return
// CHECK-LABEL: gpu.func @grad_mul_kernel
// CHECK: call @__nabla_vjp_mul_dc
// CHECK-LABEL: gpu.func @grad_mul_kernel_again
// CHECK: call @__nabla_vjp_mul_dc
// CHECK-NOT: func.func private @__nabla_vjp_mul_dc
gpu.module @kernels {
  func.func @mul(%A: memref<?xf32>, %n: index) {
    %i = gpu.global_id x
    %inbounds = arith.cmpi ult, %i, %n : index
    scf.if %inbounds {
      %a = memref.load %A[%i] : memref<?xf32>
      %sq = arith.mulf %a, %a : f32
      memref.store %sq, %A[%i] : memref<?xf32>
    }
    return
  }
  gpu.func @grad_mul_kernel(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
    nabla.autodiff @mul(%A, %dA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                      ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
    gpu.return
  }
  // The same request shares the generated function.
  gpu.func @grad_mul_kernel_again(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
    nabla.autodiff @mul(%A, %dA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                      ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
    gpu.return
  }
}

// -----

// A shared read (index not the global id) accumulates atomically. The
// index is a kernel parameter, uniform across the grid: the name records it
// (`_u1`), which proves nothing exclusive here.
// CHECK-LABEL: func.func private @__nabla_vjp_gather_dc_a_u1(
// CHECK: memref.atomic_rmw addf
gpu.module @kernels {
  func.func @gather(%C: memref<?xf32>, %k: index) -> f32 {
    %c = memref.load %C[%k] : memref<?xf32>
    %y = arith.mulf %c, %c : f32
    return %y : f32
  }
  gpu.func @k(%C: memref<?xf32>, %dC: memref<?xf32>, %k: index, %seed: f32) kernel {
    %y = nabla.autodiff @gather(%C, %dC, %k, %seed) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                                     ret_activity = [#nabla.activity<active>]}
        : (memref<?xf32>, memref<?xf32>, index, f32) -> f32
    gpu.return
  }
}

// -----

// A device function indexing a buffer at an offset argument plus the global
// id (how the LLVM IR frontend passes a pointer: buffer and offset). With
// the offset uniform at the request (0, a kernel's parameter) the adjoint's
// accumulation is thread-exclusive along x: plain load-add-store, the atomic
// only behind the run-time check that the other dimensions are one; with an
// offset that varies (the thread id), an atomic add.
// (The store's index, n + i, is exclusive either way; `n` indexes memory,
// so the names record it too.)
// CHECK-LABEL: func.func private @__nabla_vjp_offset_dcc_u2(
// CHECK: scf.if
// CHECK: } else {
// CHECK: memref.atomic_rmw assign
// CHECK-NOT: scf.if
// CHECK: memref.atomic_rmw addf
// CHECK-LABEL: func.func private @__nabla_vjp_offset_dcc_u1_u2(
// CHECK: memref.atomic_rmw assign
// CHECK: scf.if
// CHECK:   %[[OLD:.*]] = memref.load
// CHECK:   %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK:   memref.store %[[NEW]]
// CHECK: } else {
// CHECK:   memref.atomic_rmw addf
// CHECK: }
// CHECK-LABEL: gpu.func @uniform_offset
// CHECK: call @__nabla_vjp_offset_dcc_u1_u2(
// CHECK-LABEL: gpu.func @varying_offset
// CHECK: call @__nabla_vjp_offset_dcc_u2(
gpu.module @kernels {
  func.func @offset(%x: memref<?xf32>, %off: index, %n: index) {
    %i = gpu.global_id x
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %j = arith.addi %off, %i : index
      %v = memref.load %x[%j] : memref<?xf32>
      %y = arith.mulf %v, %v : f32
      %k = arith.addi %n, %i : index
      memref.store %y, %x[%k] : memref<?xf32>
    }
    return
  }
  gpu.func @uniform_offset(%x: memref<?xf32>, %dx: memref<?xf32>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    nabla.autodiff @offset(%x, %dx, %c0, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
                                              ret_activity = []} : (memref<?xf32>, memref<?xf32>, index, index) -> ()
    gpu.return
  }
  gpu.func @varying_offset(%x: memref<?xf32>, %dx: memref<?xf32>, %n: index) kernel {
    %t = gpu.thread_id x
    nabla.autodiff @offset(%x, %dx, %t, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
                                              ret_activity = []} : (memref<?xf32>, memref<?xf32>, index, index) -> ()
    gpu.return
  }
}

// -----

// Scalars: reverse mode returns the primal then the gradients; nested calls
// are inlined; integer computation stays inactive.
// Generated functions are placed right after the callee (latest first).
// CHECK-LABEL: func.func private @__nabla_jvp_f_dc_d(
// CHECK-SAME: %[[X:.*]]: f32, %[[DX:.*]]: f32, %[[K:.*]]: i32) -> (f32, f32)
// CHECK: %[[SIN:.*]] = math.sin %[[X]]
// CHECK: %[[COS:.*]] = math.cos %[[X]]
// CHECK: %[[T:.*]] = arith.mulf %[[DX]], %[[COS]]
// CHECK: return %[[SIN]], %[[T]]
// CHECK-LABEL: func.func private @__nabla_vjp_f_ac_a(
// CHECK-SAME: %[[X:.*]]: f32, %[[K:.*]]: i32, %[[S:.*]]: f32) -> (f32, f32)
// CHECK: %[[SIN:.*]] = math.sin %[[X]]
// CHECK: %[[COS:.*]] = math.cos %[[X]]
// CHECK: %[[G:.*]] = arith.mulf %[[S]], %[[COS]]
// CHECK: return %[[SIN]], %[[G]]
func.func @inner(%x: f32) -> f32 {
  %s = math.sin %x : f32
  return %s : f32
}
func.func @f(%x: f32, %k: i32) -> f32 {
  %k2 = arith.addi %k, %k : i32
  %y = func.call @inner(%x) : (f32) -> f32
  return %y : f32
}
func.func @use(%x: f32, %dx: f32, %k: i32, %s: f32) -> (f32, f32, f32, f32) {
  %y, %g = nabla.autodiff @f(%x, %k, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>],
                                          ret_activity = [#nabla.activity<active>]} : (f32, i32, f32) -> (f32, f32)
  %p, %t = nabla.fwddiff @f(%x, %dx, %k) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                          ret_activity = [#nabla.activity<dup>]} : (f32, f32, i32) -> (f32, f32)
  return %y, %g, %p, %t : f32, f32, f32, f32
}

// -----

// cf branches are lifted to scf before differentiation: the adjoint flows to
// the operand the branch selected.
// CHECK-LABEL: func.func private @__nabla_vjp_clamp_aa_x(
// CHECK-SAME: %[[X:.*]]: f32, %[[LO:.*]]: f32, %[[S:.*]]: f32) -> (f32, f32)
// CHECK-NOT: cf.{{(br|cond_br)}}
// CHECK: scf.if
// CHECK: return
func.func @clamp(%x: f32, %lo: f32) -> f32 {
  %below = arith.cmpf olt, %x, %lo : f32
  cf.cond_br %below, ^low, ^done(%x : f32)
^low:
  cf.br ^done(%lo : f32)
^done(%r: f32):
  %y = arith.mulf %r, %r : f32
  return %y : f32
}
func.func @g(%x: f32, %lo: f32, %s: f32) -> (f32, f32) {
  %gx, %glo = nabla.autodiff @clamp(%x, %lo, %s) {activity = [#nabla.activity<active>, #nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32, f32) -> (f32, f32)
  return %gx, %glo : f32, f32
}

// -----

// Custom derivatives: a direct request calls the rule; a call inside a
// differentiated function (here of a body-less library function) is not
// inlined but differentiated through its rule, in both modes.
// CHECK-LABEL: func.func private @__nabla_jvp_outer_d_d(
// CHECK: %[[R:.*]]:2 = call @lib_sin_jvp(
// CHECK-LABEL: func.func private @__nabla_vjp_outer_a_x(
// CHECK: call @lib_sin(
// CHECK: call @lib_sin_vjp(
// CHECK-LABEL: func.func @use(
// CHECK: call @lib_sin_vjp(
// CHECK: call @__nabla_vjp_outer_a_x(
// CHECK: call @__nabla_jvp_outer_d_d(
func.func private @lib_sin(f32) -> f32
func.func @lib_sin_vjp(%x: f32, %seed: f32) -> (f32, f32) {
  %y = math.sin %x : f32
  %c = math.cos %x : f32
  %d = arith.mulf %c, %seed : f32
  return %y, %d : f32, f32
}
func.func @lib_sin_jvp(%x: f32, %t: f32) -> (f32, f32) {
  %y = math.sin %x : f32
  %c = math.cos %x : f32
  %d = arith.mulf %c, %t : f32
  return %y, %d : f32, f32
}
nabla.custom_derivative @lib_sin reverse @lib_sin_vjp {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}
nabla.custom_derivative @lib_sin forward @lib_sin_jvp {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]}
func.func @outer(%x: f32) -> f32 {
  %s = func.call @lib_sin(%x) : (f32) -> f32
  %y = arith.mulf %s, %x : f32
  return %y : f32
}
func.func @use(%x: f32, %dx: f32, %seed: f32) -> (f32, f32, f32) {
  %y, %g = nabla.autodiff @lib_sin(%x, %seed) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]} : (f32, f32) -> (f32, f32)
  %h = nabla.autodiff @outer(%x, %seed) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  %p, %t = nabla.fwddiff @outer(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]} : (f32, f32) -> (f32, f32)
  return %g, %h, %t : f32, f32, f32
}

// -----

// Dead code is removed from generated derivatives: with activenoneed the
// primal result z = y * y is not computed, only what the adjoint needs.
// CHECK-LABEL: func.func private @__nabla_vjp_deadcode_a_x
// CHECK-NEXT: %[[Y:.*]] = math.sin %[[X:[^ ]*]] : f32
// CHECK-NEXT: arith.mulf %{{.*}}, %[[Y]] : f32
// CHECK-NEXT: arith.mulf %{{.*}}, %[[Y]] : f32
// CHECK-NEXT: arith.addf
// CHECK-NEXT: math.cos %[[X]] : f32
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: return
func.func @deadcode(%x: f32) -> f32 {
  %y = math.sin %x : f32
  %z = arith.mulf %y, %y : f32
  return %z : f32
}
func.func @deadcode_grad(%x: f32, %s: f32) -> f32 {
  %d = nabla.autodiff @deadcode(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return %d : f32
}

// -----

// X[i] alone would be thread-exclusive, but X[i + 1] of thread i - 1 meets
// thread i's element: both accumulations are atomic.
// CHECK-LABEL: func.func private @__nabla_vjp_neighbours_dd
// CHECK-NOT: memref.store {{.*}} %arg1
// CHECK: memref.atomic_rmw addf %{{.*}}, %arg1[%{{.*}}]
// CHECK: memref.atomic_rmw addf %{{.*}}, %arg1[%{{.*}}]
// CHECK: return
func.func @neighbours(%X: memref<?xf32>, %Y: memref<?xf32>) {
  %i = gpu.global_id x
  %c1 = arith.constant 1 : index
  %j = arith.addi %i, %c1 : index
  %a = memref.load %X[%i] : memref<?xf32>
  %b = memref.load %X[%j] : memref<?xf32>
  %s = arith.addf %a, %b : f32
  memref.store %s, %Y[%i] : memref<?xf32>
  return
}
func.func @neighbours_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) {
  nabla.autodiff @neighbours(%X, %dX, %Y, %dY) {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  return
}

// -----

// dupnoneed on a buffer the function only writes (a store, an atomic add
// whose old value is unused): the forward sweep skips the writes (the buffer
// keeps its initial contents; only the shadows matter), so neither the
// output store nor the histogram's primal atomic is emitted; the adjoints
// still read the shadows.
// CHECK-LABEL: func.func private @__nabla_vjp_scatter_dnnc(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?xf32>, %[[DX:[a-z0-9]+]]: memref<?xf32>, %[[Y:[a-z0-9]+]]: memref<?xf32>, %[[DY:[a-z0-9]+]]: memref<?xf32>, %[[BINS:[a-z0-9]+]]: memref<4xf32>, %[[DBINS:[a-z0-9]+]]: memref<4xf32>, %{{.*}}: index)
// CHECK-NOT: memref.store %{{.*}}, %[[Y]]
// CHECK-NOT: memref.atomic_rmw addf %{{.*}}, %[[BINS]]
// CHECK-DAG: memref.load %[[DY]]
// CHECK-DAG: memref.load %[[DBINS]]
// CHECK: return
func.func @scatter(%x: memref<?xf32>, %y: memref<?xf32>, %bins: memref<4xf32>, %k: index) {
  %i = gpu.global_id x
  %v = memref.load %x[%i] : memref<?xf32>
  %s = math.sin %v : f32
  memref.store %s, %y[%i] : memref<?xf32>
  %old = memref.atomic_rmw addf %v, %bins[%k] : (f32, memref<4xf32>) -> f32
  return
}
func.func @g(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %bins: memref<4xf32>, %dbins: memref<4xf32>, %k: index) {
  nabla.autodiff @scatter(%x, %dx, %y, %dy, %bins, %dbins, %k) {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>, #nabla.activity<dupnoneed>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<4xf32>, memref<4xf32>, index) -> ()
  return
}

// -----

// dupnoneed on y = a x + y: the only read of y comes before the store, so
// no read observes it: the store goes, and with it the primal's a x + y.
// CHECK-LABEL: func.func private @__nabla_vjp_axpy_dnc(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<?xf32>, %{{[a-z0-9]+}}: memref<?xf32>, %[[Y:[a-z0-9]+]]: memref<?xf32>,
// CHECK-NOT: memref.store %{{.*}}, %[[Y]]
// CHECK-NOT: memref.load %[[Y]]
// CHECK: return
func.func @axpy(%x: memref<?xf32>, %y: memref<?xf32>, %a: f32) {
  %i = gpu.global_id x
  %xv = memref.load %x[%i] : memref<?xf32>
  %yv = memref.load %y[%i] : memref<?xf32>
  %ax = arith.mulf %a, %xv : f32
  %r = arith.addf %ax, %yv : f32
  memref.store %r, %y[%i] : memref<?xf32>
  return
}
func.func @g(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %a: f32) {
  nabla.autodiff @axpy(%x, %dx, %y, %dy, %a) {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, f32) -> ()
  return
}

// -----

// dupnoneed, but the buffer is read after the store (here in a later
// iteration of the loop holding both): the store stays.
// CHECK-LABEL: func.func private @__nabla_vjp_accumulate_n(
// CHECK-SAME: %[[Y:[a-z0-9]+]]: memref<?xf32>,
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[Y]]
func.func @accumulate(%y: memref<?xf32>) {
  %i = gpu.global_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %v = memref.load %y[%i] : memref<?xf32>
    %s = math.sin %v : f32
    memref.store %s, %y[%i] : memref<?xf32>
    gpu.barrier
  }
  return
}
func.func @g(%y: memref<?xf32>, %dy: memref<?xf32>) {
  nabla.autodiff @accumulate(%y, %dy) {activity = [#nabla.activity<dupnoneed>], ret_activity = []} : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
