// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// Buffers overwritten by later work: %h is squared into, read by @expo, then
// overwritten by @combine (which reads %y and %x); a device-to-device copy
// saves %h into %keep, a memset clears %h before @combine accumulates into
// it. Each overwrite of a buffer an earlier launch read is undone for that
// launch's adjoint.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @square(%x: memref<16xf32>, %h: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<16xf32>
      %p = arith.mulf %a, %a : f32
      memref.store %p, %h[%i] : memref<16xf32>
      gpu.return
    }
    gpu.func @expo(%h: memref<16xf32>, %y: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %h[%i] : memref<16xf32>
      %e = math.exp %a : f32
      memref.store %e, %y[%i] : memref<16xf32>
      gpu.return
    }
    // h[i] += y[i] * x[15 - i] (h was zeroed by a memset).
    gpu.func @combine(%y: memref<16xf32>, %x: memref<16xf32>, %h: memref<16xf32>) kernel {
      %c15 = arith.constant 15 : index
      %i = gpu.thread_id x
      %j = arith.subi %c15, %i : index
      %a = memref.load %y[%i] : memref<16xf32>
      %b = memref.load %x[%j] : memref<16xf32>
      %old = memref.load %h[%i] : memref<16xf32>
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %old, %p : f32
      memref.store %s, %h[%i] : memref<16xf32>
      gpu.return
    }
    // out[i] = h[i] * keep[i]
    gpu.func @product(%h: memref<16xf32>, %keep: memref<16xf32>, %out: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %h[%i] : memref<16xf32>
      %b = memref.load %keep[%i] : memref<16xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %out[%i] : memref<16xf32>
      gpu.return
    }
  }

  func.func @program(%x: memref<16xf32>, %out: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %zero = arith.constant 0.0 : f32
    %h = gpu.alloc () : memref<16xf32>
    %y = gpu.alloc () : memref<16xf32>
    %keep = gpu.alloc () : memref<16xf32>
    gpu.launch_func @kernels::@square blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%x : memref<16xf32>, %h : memref<16xf32>)
    gpu.launch_func @kernels::@expo blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%h : memref<16xf32>, %y : memref<16xf32>)
    gpu.memcpy %keep, %h : memref<16xf32>, memref<16xf32>
    gpu.memset %h, %zero : memref<16xf32>, f32
    gpu.launch_func @kernels::@combine blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%y : memref<16xf32>, %x : memref<16xf32>, %h : memref<16xf32>)
    gpu.launch_func @kernels::@product blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%h : memref<16xf32>, %keep : memref<16xf32>, %out : memref<16xf32>)
    gpu.dealloc %keep : memref<16xf32>
    gpu.dealloc %y : memref<16xf32>
    gpu.dealloc %h : memref<16xf32>
    return
  }

  // Its gradient and tangent, as a user asks for them.
  func.func @grad(%x: memref<16xf32>, %dx: memref<16xf32>, %out: memref<16xf32>, %dout: memref<16xf32>) {
    nabla.autodiff @program(%x, %dx, %out, %dout) {activity = [#nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
    return
  }
  func.func @tangent(%x: memref<16xf32>, %dx: memref<16xf32>, %out: memref<16xf32>, %dout: memref<16xf32>) {
    nabla.fwddiff @program(%x, %dx, %out, %dout) {activity = [#nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
    return
  }
}
