// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// Linked lists in a pool of nodes, one per thread, walked and updated in
// place: the while loop's trip count is known only by walking, so the
// adjoint kernel's tape grows. The host program gives it
// $NABLA_TAPE_CAPACITY slots per thread (32 by default) and, after the
// launch, ends with an error naming the capacity needed when a list was
// longer (it cannot rerun the launch from its inputs as nabla-run does).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @walk(%x: memref<?xf32>, %head: memref<?xi32>, %next: memref<?xi32>, %lists: index) kernel {
      %zero = arith.constant 0 : i32
      %one = arith.constant 1.0 : f32
      %t = gpu.thread_id x
      %inside = arith.cmpi ult, %t, %lists : index
      scf.if %inside {
        %first = memref.load %head[%t] : memref<?xi32>
        %r:2 = scf.while (%i = %first, %carry = %one) : (i32, f32) -> (i32, f32) {
          %go = arith.cmpi sge, %i, %zero : i32
          scf.condition(%go) %i, %carry : i32, f32
        } do {
        ^bb0(%i: i32, %carry: f32):
          %k = arith.index_cast %i : i32 to index
          %v = memref.load %x[%k] : memref<?xf32>
          %w = arith.mulf %v, %carry : f32
          memref.store %w, %x[%k] : memref<?xf32>
          %n = memref.load %next[%k] : memref<?xi32>
          scf.yield %n, %v : i32, f32
        }
      }
      gpu.return
    }
  }

  func.func @program(%x: memref<?xf32>, %head: memref<?xi32>, %next: memref<?xi32>, %lists: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kernels::@walk blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1)
        args(%x : memref<?xf32>, %head : memref<?xi32>, %next : memref<?xi32>, %lists : index)
    return
  }

  func.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %head: memref<?xi32>, %next: memref<?xi32>, %lists: index) {
    nabla.autodiff @program(%x, %dx, %head, %next, %lists)
        {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>, #nabla.activity<const>],
         ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xi32>, memref<?xi32>, index) -> ()
    return
  }
}
