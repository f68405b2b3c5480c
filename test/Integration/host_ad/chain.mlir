// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// A chain of three launches through an intermediate device buffer: an
// elementwise product into %h, tanh of %h in place (the reverse sweep needs
// %h as the product left it: a snapshot), and a sum into %loss by one thread.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mul(%x: memref<?xf32>, %w: memref<?xf32>, %h: memref<?xf32>, %n: index) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %b = memref.load %w[%i] : memref<?xf32>
        %p = arith.mulf %a, %b : f32
        memref.store %p, %h[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @tanh_inplace(%h: memref<?xf32>, %n: index) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %h[%i] : memref<?xf32>
        %t = math.tanh %a : f32
        memref.store %t, %h[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @sum(%h: memref<?xf32>, %loss: memref<1xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
        %v = memref.load %h[%i] : memref<?xf32>
        %next = arith.addf %acc, %v : f32
        scf.yield %next : f32
      }
      memref.store %s, %loss[%c0] : memref<1xf32>
      gpu.return
    }
  }

  func.func @program(%x: memref<?xf32>, %w: memref<?xf32>, %loss: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %blocks = arith.ceildivui %n, %c32 : index
    %h = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@mul blocks in (%blocks, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%x : memref<?xf32>, %w : memref<?xf32>, %h : memref<?xf32>, %n : index)
    gpu.launch_func @kernels::@tanh_inplace blocks in (%blocks, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%h : memref<?xf32>, %n : index)
    gpu.launch_func @kernels::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%h : memref<?xf32>, %loss : memref<1xf32>, %n : index)
    gpu.dealloc %h : memref<?xf32>
    return
  }

  // Its gradient and tangent, as a user asks for them.
  func.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %w: memref<?xf32>, %dw: memref<?xf32>, %loss: memref<1xf32>, %dloss: memref<1xf32>) {
    nabla.autodiff @program(%x, %dx, %w, %dw, %loss, %dloss) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()
    return
  }
  func.func @tangent(%x: memref<?xf32>, %dx: memref<?xf32>, %w: memref<?xf32>, %dw: memref<?xf32>, %loss: memref<1xf32>, %dloss: memref<1xf32>) {
    nabla.fwddiff @program(%x, %dx, %w, %dw, %loss, %dloss) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()
    return
  }
}
