// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// Each thread normalises its row in place by the row's sum of squares, over
// a run-time row length: the adjoint kernel keeps the row's values in a
// global-memory tape, which the host code allocates around each launch of
// it (sized from %cols and the launch's grid) and frees after.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @normalize(%x: memref<?xf32>, %rows: index, %cols: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
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
      }
      gpu.return
    }
  }

  func.func @program(%x: memref<?xf32>, %rows: index, %cols: index) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernels::@normalize blocks in (%c1, %c1, %c1)
        threads in (%c8, %c1, %c1)
        args(%x : memref<?xf32>, %rows : index, %cols : index)
    return
  }

  func.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %rows: index, %cols: index) {
    nabla.autodiff @program(%x, %dx, %rows, %cols)
        {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
         ret_activity = []} : (memref<?xf32>, memref<?xf32>, index, index) -> ()
    return
  }
}
