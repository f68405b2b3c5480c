// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// (No Metal: MSL has no f64.)
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// An scf.for of launches, its trip count a runtime argument: %layers
// residual layers update the state in place, h = h + s(W[l] h + b[l]) with s(a) = a / sqrt(1 + a^2)
// (8 features, a 8x8 matrix per layer read from a [layers x 8 x 8] weight
// buffer at the layer's offset), in f64. The reverse sweep runs the layers
// backwards, restoring %h before each layer's adjoint from the copy the
// forward sweep kept for that iteration.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // t[i] = s(sum_j W[l, i, j] h[j] + b[l, i])
    gpu.func @affine_tanh(%w: memref<?x8x8xf64>, %b: memref<?x8xf64>, %h: memref<8xf64>,
                          %t: memref<8xf64>, %l: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %i = gpu.thread_id x
      %bias = memref.load %b[%l, %i] : memref<?x8xf64>
      %acc = scf.for %j = %c0 to %c8 step %c1 iter_args(%a = %bias) -> f64 {
        %wij = memref.load %w[%l, %i, %j] : memref<?x8x8xf64>
        %hj = memref.load %h[%j] : memref<8xf64>
        %p = arith.mulf %wij, %hj : f64
        %s = arith.addf %a, %p : f64
        scf.yield %s : f64
      }
      // softsign-like: acc / sqrt(1 + acc^2)
      %one = arith.constant 1.0 : f64
      %sq = arith.mulf %acc, %acc : f64
      %den2 = arith.addf %one, %sq : f64
      %den = math.sqrt %den2 : f64
      %th = arith.divf %acc, %den : f64
      memref.store %th, %t[%i] : memref<8xf64>
      gpu.return
    }
    // h[i] += t[i]
    gpu.func @residual(%h: memref<8xf64>, %t: memref<8xf64>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %h[%i] : memref<8xf64>
      %b = memref.load %t[%i] : memref<8xf64>
      %s = arith.addf %a, %b : f64
      memref.store %s, %h[%i] : memref<8xf64>
      gpu.return
    }
  }

  func.func @program(%w: memref<?x8x8xf64>, %b: memref<?x8xf64>, %h: memref<8xf64>, %layers: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %t = gpu.alloc () : memref<8xf64>
    scf.for %l = %c0 to %layers step %c1 {
      gpu.launch_func @kernels::@affine_tanh blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
          args(%w : memref<?x8x8xf64>, %b : memref<?x8xf64>, %h : memref<8xf64>, %t : memref<8xf64>, %l : index)
      gpu.launch_func @kernels::@residual blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
          args(%h : memref<8xf64>, %t : memref<8xf64>)
    }
    gpu.dealloc %t : memref<8xf64>
    return
  }

  // Its gradient and tangent, as a user asks for them.
  func.func @grad(%w: memref<?x8x8xf64>, %dw: memref<?x8x8xf64>, %b: memref<?x8xf64>, %db: memref<?x8xf64>, %h: memref<8xf64>, %dh: memref<8xf64>, %layers: index) {
    nabla.autodiff @program(%w, %dw, %b, %db, %h, %dh, %layers) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
        ret_activity = []} : (memref<?x8x8xf64>, memref<?x8x8xf64>, memref<?x8xf64>, memref<?x8xf64>, memref<8xf64>, memref<8xf64>, index) -> ()
    return
  }
  func.func @tangent(%w: memref<?x8x8xf64>, %dw: memref<?x8x8xf64>, %b: memref<?x8xf64>, %db: memref<?x8xf64>, %h: memref<8xf64>, %dh: memref<8xf64>, %layers: index) {
    nabla.fwddiff @program(%w, %dw, %b, %db, %h, %dh, %layers) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
        ret_activity = []} : (memref<?x8x8xf64>, memref<?x8x8xf64>, memref<?x8xf64>, memref<?x8xf64>, memref<8xf64>, memref<8xf64>, index) -> ()
    return
  }
}
