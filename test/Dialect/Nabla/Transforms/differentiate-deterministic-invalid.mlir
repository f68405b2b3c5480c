// nabla-differentiate{deterministic=true} rejects, with a located error, the
// adjoint accumulations it cannot put in a fixed order.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-differentiate=deterministic=true

// Neighbouring threads collide on X[g + 1] (the halo of a stencil): no known
// order.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shift(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      %g = gpu.global_id x
      %c1 = arith.constant 1 : index
      %g1 = arith.addi %g, %c1 : index
      %x0 = memref.load %X[%g] : memref<?xf32>
      // expected-error @below {{'memref.load' op has an adjoint that deterministic=true cannot order: its index varies across threads without being proven thread-exclusive}}
      %x1 = memref.load %X[%g1] : memref<?xf32>
      %x = arith.addf %x0, %x1 : f32
      memref.store %x, %Y[%g] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @shift -> @shift_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
  }
}

// -----

// A device function has no scratch for per-block partials: every thread's
// adjoint of w[0] cannot be ordered across the grid.
func.func @f(%W: memref<1xf32>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.load' op has an adjoint that many threads of the grid accumulate into one element; deterministic=true orders that only in a kernel adjoint (nabla.kernel_adjoint)}}
  %w = memref.load %W[%c0] : memref<1xf32>
  %y = arith.mulf %w, %x : f32
  return %y : f32
}
func.func @g(%W: memref<1xf32>, %dW: memref<1xf32>, %x: f32, %s: f32) {
  nabla.autodiff @f(%W, %dW, %x, %s) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (memref<1xf32>, memref<1xf32>, f32, f32) -> ()
  return
}

// -----

// The block reduction of a workgroup element needs the whole block in the
// call: a device function without a barrier may be called divergently.
func.func @f(%T: memref<4xf32, #gpu.address_space<workgroup>>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.load' op has an adjoint that the block accumulates into one workgroup element; deterministic=true orders it with block reductions, which need a function that the whole block calls together (one holding a barrier) or a kernel adjoint}}
  %t = memref.load %T[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
  %y = arith.mulf %t, %x : f32
  return %y : f32
}
func.func @g(%T: memref<4xf32, #gpu.address_space<workgroup>>, %dT: memref<4xf32, #gpu.address_space<workgroup>>, %x: f32, %s: f32) {
  nabla.autodiff @f(%T, %dT, %x, %s) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (memref<4xf32, #gpu.address_space<workgroup>>, memref<4xf32, #gpu.address_space<workgroup>>, f32, f32) -> ()
  return
}

// -----

// Inside a loop the index k varies: not one element.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dot(%W: memref<4xf32>, %X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      %g = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %x = memref.load %X[%g] : memref<?xf32>
      %s = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
        // expected-error @below {{'memref.load' op has an adjoint that deterministic=true cannot order}}
        %w = memref.load %W[%k] : memref<4xf32>
        %p = arith.mulf %w, %x : f32
        %a = arith.addf %acc, %p : f32
        scf.yield %a : f32
      }
      memref.store %s, %Y[%g] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @dot -> @dot_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<dup>]}
  }
}

// -----

// Several threads store to one element (every lane to S[tid / 32]): which of
// them takes its adjoint would depend on the hardware's order.
module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%X: memref<?xf32>) workgroup(%S: memref<2xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %w = arith.divui %t, %c32 : index
    %x = memref.load %X[%t] : memref<?xf32>
    // expected-error @below {{'memref.store' op may be executed by several threads at one element (its index is not an injective function of the thread id, nor is the store guarded to one thread): deterministic=true cannot choose which of them takes the element's adjoint}}
    memref.store %x, %S[%w] : memref<2xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %c0 = arith.constant 0 : index
    %y = memref.load %S[%c0] : memref<2xf32, #gpu.address_space<workgroup>>
    memref.store %y, %X[%t] : memref<?xf32>
    gpu.return
  }
  nabla.kernel_adjoint @k -> @dk {activity = [#nabla.activity<dup>]}
}
}
