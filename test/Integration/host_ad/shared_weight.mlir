// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// One weight buffer read by two kernels (its gradient accumulates both
// contributions) and an intermediate read by the second: y = x * w, then
// z = sin(w) + y * y, then loss = sum(z) over a tree reduction in workgroup
// memory with barriers.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<64xf32>, %w: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<64xf32>
      %b = memref.load %w[%i] : memref<64xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %y[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @mix(%w: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %w[%i] : memref<64xf32>
      %b = memref.load %y[%i] : memref<64xf32>
      %s = math.sin %a : f32
      %q = arith.mulf %b, %b : f32
      %r = arith.addf %s, %q : f32
      memref.store %r, %z[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @reduce(%z: memref<64xf32>, %loss: memref<1xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c32 = arith.constant 32 : index
      %i = gpu.thread_id x
      %v = memref.load %z[%i] : memref<64xf32>
      memref.store %v, %tile[%i] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %last = scf.while (%stride = %c32) : (index) -> index {
        %more = arith.cmpi ugt, %stride, %c0 : index
        scf.condition(%more) %stride : index
      } do {
      ^bb0(%s: index):
        %active = arith.cmpi ult, %i, %s : index
        scf.if %active {
          %j = arith.addi %i, %s : index
          %a = memref.load %tile[%i] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %a, %b : f32
          memref.store %sum, %tile[%i] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
        %half = arith.divui %s, %c2 : index
        scf.yield %half : index
      }
      %first = arith.cmpi eq, %i, %c0 : index
      scf.if %first {
        %t = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        memref.store %t, %loss[%c0] : memref<1xf32>
      }
      gpu.return
    }
  }

  func.func @program(%x: memref<64xf32>, %w: memref<64xf32>, %loss: memref<1xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %y = gpu.alloc () : memref<64xf32>
    %z = gpu.alloc () : memref<64xf32>
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%x : memref<64xf32>, %w : memref<64xf32>, %y : memref<64xf32>)
    gpu.launch_func @kernels::@mix blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%w : memref<64xf32>, %y : memref<64xf32>, %z : memref<64xf32>)
    gpu.launch_func @kernels::@reduce blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%z : memref<64xf32>, %loss : memref<1xf32>)
    gpu.dealloc %z : memref<64xf32>
    gpu.dealloc %y : memref<64xf32>
    return
  }

  // Its gradient and tangent, as a user asks for them.
  func.func @grad(%x: memref<64xf32>, %dx: memref<64xf32>, %w: memref<64xf32>, %dw: memref<64xf32>, %loss: memref<1xf32>, %dloss: memref<1xf32>) {
    nabla.autodiff @program(%x, %dx, %w, %dw, %loss, %dloss) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<1xf32>, memref<1xf32>) -> ()
    return
  }
  func.func @tangent(%x: memref<64xf32>, %dx: memref<64xf32>, %w: memref<64xf32>, %dw: memref<64xf32>, %loss: memref<1xf32>, %dloss: memref<1xf32>) {
    nabla.fwddiff @program(%x, %dx, %w, %dw, %loss, %dloss) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<1xf32>, memref<1xf32>) -> ()
    return
  }
}
