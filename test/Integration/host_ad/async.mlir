// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// The same computation as chain.mlir written with async tokens: allocation,
// launches and the free ordered by tokens, joined by gpu.wait. The
// derivative runs it in program order, synchronously.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mul(%x: memref<32xf32>, %w: memref<32xf32>, %h: memref<32xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<32xf32>
      %b = memref.load %w[%i] : memref<32xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %h[%i] : memref<32xf32>
      gpu.return
    }
    gpu.func @softplus(%h: memref<32xf32>, %y: memref<32xf32>) kernel {
      %one = arith.constant 1.0 : f32
      %i = gpu.thread_id x
      %a = memref.load %h[%i] : memref<32xf32>
      %e = math.exp %a : f32
      %s = arith.addf %one, %e : f32
      %l = math.log %s : f32
      memref.store %l, %y[%i] : memref<32xf32>
      gpu.return
    }
  }

  func.func @program(%x: memref<32xf32>, %w: memref<32xf32>, %y: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %t0 = gpu.wait async
    %h, %t1 = gpu.alloc async [%t0] () : memref<32xf32>
    %t2 = gpu.launch_func async [%t1] @kernels::@mul blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%x : memref<32xf32>, %w : memref<32xf32>, %h : memref<32xf32>)
    %t3 = gpu.launch_func async [%t2] @kernels::@softplus blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%h : memref<32xf32>, %y : memref<32xf32>)
    %t4 = gpu.dealloc async [%t3] %h : memref<32xf32>
    gpu.wait [%t4]
    return
  }

  // Its gradient and tangent, as a user asks for them.
  func.func @grad(%x: memref<32xf32>, %dx: memref<32xf32>, %w: memref<32xf32>, %dw: memref<32xf32>, %y: memref<32xf32>, %dy: memref<32xf32>) {
    nabla.autodiff @program(%x, %dx, %w, %dw, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<32xf32>, memref<32xf32>, memref<32xf32>, memref<32xf32>, memref<32xf32>, memref<32xf32>) -> ()
    return
  }
  func.func @tangent(%x: memref<32xf32>, %dx: memref<32xf32>, %w: memref<32xf32>, %dw: memref<32xf32>, %y: memref<32xf32>, %dy: memref<32xf32>) {
    nabla.fwddiff @program(%x, %dx, %w, %dw, %y, %dy) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<32xf32>, memref<32xf32>, memref<32xf32>, memref<32xf32>, memref<32xf32>, memref<32xf32>) -> ()
    return
  }
}
