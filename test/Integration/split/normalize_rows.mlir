// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-differentiate --nabla-materialize-tapes | FileCheck %s
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// Both halves take the caller's tape and lay it out alike (one formula).
// CHECK: gpu.func @grad_fwd({{.*}}, %[[T:.*]]: memref<?xi32> {nabla.split_tape}) kernel attributes {nabla.split_tape = {formula = "[[F:[^"]*]]"
// CHECK: gpu.func @grad_rev({{.*}}, %[[T2:.*]]: memref<?xi32> {nabla.split_tape}) kernel attributes {nabla.split_tape = {formula = "[[F]]"

// Split mode of a kernel that normalises each thread's row in place by its
// sum of squares over a run-time row length, then applies a fixed number of
// damped steps to a scalar (a static loop): @grad_fwd runs the primal and
// writes the tape, @grad_rev reads it and leaves in the shadows what the
// combined adjoint @grad leaves. test_split_mode.py launches them apart,
// with an unrelated kernel in between.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @normalize(%x: memref<?xf32>, %y: memref<?xf32>, %rows: index, %cols: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %zero = arith.constant 0.0 : f32
      %half = arith.constant 0.5 : f32
      %r = gpu.thread_id x
      %inside = arith.cmpi ult, %r, %rows : index
      scf.if %inside {
        %base = arith.muli %r, %cols : index
        %s = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> f32 {
          %k = arith.addi %base, %j : index
          %v = memref.load %x[%k] : memref<?xf32>
          %sq = arith.mulf %v, %v : f32
          %next = arith.addf %acc, %sq : f32
          scf.yield %next : f32
        }
        scf.for %j = %c0 to %cols step %c1 {
          %k = arith.addi %base, %j : index
          %v = memref.load %x[%k] : memref<?xf32>
          %q = arith.divf %v, %s : f32
          memref.store %q, %x[%k] : memref<?xf32>
        }
        %t = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %s) -> f32 {
          %e = math.sin %a : f32
          %d = arith.mulf %e, %half : f32
          %n = arith.addf %a, %d : f32
          scf.yield %n : f32
        }
        memref.store %t, %y[%r] : memref<?xf32>
      }
      gpu.return
    }
    // A private window: its shadow is made again, zeroed, by the reverse.
    gpu.func @window(%x: memref<?xf32>, %y: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %buf = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
      %base = arith.muli %t, %c4 : index
      scf.for %i = %c0 to %c4 step %c1 {
        %k = arith.addi %base, %i : index
        %v = memref.load %x[%k] : memref<?xf32>
        %e = math.exp %v : f32
        memref.store %e, %buf[%i] : memref<4xf32, #gpu.address_space<private>>
      }
      %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
        %v = memref.load %buf[%i] : memref<4xf32, #gpu.address_space<private>>
        %w = arith.mulf %v, %v : f32
        %n = arith.addf %acc, %w : f32
        scf.yield %n : f32
      }
      memref.store %s, %y[%t] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @window -> @window_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @window -> @window_fwd reverse @window_rev
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    gpu.func @unrelated(%z: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %z[%i] : memref<?xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %z[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @normalize -> @grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]}
    nabla.kernel_adjoint @normalize -> @grad_fwd reverse @grad_rev
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]}
  }
}
