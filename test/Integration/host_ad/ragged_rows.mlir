// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// Ragged rows (CSR-style offsets in a buffer): each thread normalises its row
// in place by the row's sum of squares. The row's length is in memory, so the
// adjoint kernel's global-memory tape is sized from the offsets: the host
// code reads a host copy of them for every thread of the launch (the kernel
// reads them at its entry where the primal does: only for rows that exist).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @normalize(%x: memref<?xf32>, %offsets: memref<?xi32>, %rows: index) kernel {
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %r = gpu.thread_id x
      %inside = arith.cmpi ult, %r, %rows : index
      scf.if %inside {
        %next = arith.addi %r, %c1 : index
        %first = memref.load %offsets[%r] : memref<?xi32>
        %last = memref.load %offsets[%next] : memref<?xi32>
        %begin = arith.index_cast %first : i32 to index
        %end = arith.index_cast %last : i32 to index
        %s = scf.for %k = %begin to %end step %c1 iter_args(%acc = %zero) -> f32 {
          %v = memref.load %x[%k] : memref<?xf32>
          %sq = arith.mulf %v, %v : f32
          %sum = arith.addf %acc, %sq : f32
          scf.yield %sum : f32
        }
        scf.for %k = %begin to %end step %c1 {
          %v = memref.load %x[%k] : memref<?xf32>
          %q = arith.divf %v, %s : f32
          memref.store %q, %x[%k] : memref<?xf32>
        }
      }
      gpu.return
    }
  }

  func.func @program(%x: memref<?xf32>, %offsets: memref<?xi32>, %rows: index) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernels::@normalize blocks in (%c1, %c1, %c1)
        threads in (%c8, %c1, %c1)
        args(%x : memref<?xf32>, %offsets : memref<?xi32>, %rows : index)
    return
  }

  func.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %offsets: memref<?xi32>, %rows: index) {
    nabla.autodiff @program(%x, %dx, %offsets, %rows)
        {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
         ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xi32>, index) -> ()
    return
  }
}
