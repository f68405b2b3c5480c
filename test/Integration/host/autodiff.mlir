// Host-level AD run as a whole program: @main fills registered host buffers,
// asks for nabla.autodiff of the host function @program (three launches
// through a device intermediate, one updating it in place) and prints the
// loss and the gradients: dx = w (1 - t^2), dw = x (1 - t^2) with
// t = tanh(x w), x = 0.1 i, w = 0.5 - 0.1 i; the loss's shadow ends zero.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: [0.00079307]
// CHECK: [0.5,  0.399361,  0.298923,  0.199282,  0.0998402,  0,  -0.0996409,  -0.196131]
// CHECK: [0,  0.0998402,  0.199282,  0.298923,  0.399361,  0.5,  0.597845,  0.686457]
// CHECK: [0]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mul(%x: memref<8xf32>, %w: memref<8xf32>, %h: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<8xf32>
      %b = memref.load %w[%i] : memref<8xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %h[%i] : memref<8xf32>
      gpu.return
    }
    gpu.func @tanh_inplace(%h: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %h[%i] : memref<8xf32>
      %t = math.tanh %a : f32
      memref.store %t, %h[%i] : memref<8xf32>
      gpu.return
    }
    gpu.func @sum(%h: memref<8xf32>, %loss: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
        %v = memref.load %h[%i] : memref<8xf32>
        %n = arith.addf %acc, %v : f32
        scf.yield %n : f32
      }
      memref.store %s, %loss[%c0] : memref<1xf32>
      gpu.return
    }
  }

  func.func @program(%x: memref<8xf32>, %w: memref<8xf32>, %loss: memref<1xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %h = gpu.alloc () : memref<8xf32>
    gpu.launch_func @kernels::@mul blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%x : memref<8xf32>, %w : memref<8xf32>, %h : memref<8xf32>)
    gpu.launch_func @kernels::@tanh_inplace blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%h : memref<8xf32>)
    gpu.launch_func @kernels::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%h : memref<8xf32>, %loss : memref<1xf32>)
    gpu.dealloc %h : memref<8xf32>
    return
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %x = memref.alloc() : memref<8xf32>
    %w = memref.alloc() : memref<8xf32>
    %dx = memref.alloc() : memref<8xf32>
    %dw = memref.alloc() : memref<8xf32>
    %loss = memref.alloc() : memref<1xf32>
    %dloss = memref.alloc() : memref<1xf32>
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %tenth = arith.constant 0.1 : f32
    %half = arith.constant 0.5 : f32
    scf.for %i = %c0 to %c8 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %xv = arith.mulf %f, %tenth : f32
      %wv = arith.subf %half, %xv : f32
      memref.store %xv, %x[%i] : memref<8xf32>
      memref.store %wv, %w[%i] : memref<8xf32>
      memref.store %zero, %dx[%i] : memref<8xf32>
      memref.store %zero, %dw[%i] : memref<8xf32>
    }
    memref.store %zero, %loss[%c0] : memref<1xf32>
    memref.store %one, %dloss[%c0] : memref<1xf32>
    %ux = memref.cast %x : memref<8xf32> to memref<*xf32>
    %uw = memref.cast %w : memref<8xf32> to memref<*xf32>
    %udx = memref.cast %dx : memref<8xf32> to memref<*xf32>
    %udw = memref.cast %dw : memref<8xf32> to memref<*xf32>
    %ul = memref.cast %loss : memref<1xf32> to memref<*xf32>
    %udl = memref.cast %dloss : memref<1xf32> to memref<*xf32>
    gpu.host_register %ux : memref<*xf32>
    gpu.host_register %uw : memref<*xf32>
    gpu.host_register %udx : memref<*xf32>
    gpu.host_register %udw : memref<*xf32>
    gpu.host_register %ul : memref<*xf32>
    gpu.host_register %udl : memref<*xf32>
    nabla.autodiff @program(%x, %dx, %w, %dw, %loss, %dloss) {
      activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
      ret_activity = []} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<1xf32>, memref<1xf32>) -> ()
    call @printMemrefF32(%ul) : (memref<*xf32>) -> ()
    call @printMemrefF32(%udx) : (memref<*xf32>) -> ()
    call @printMemrefF32(%udw) : (memref<*xf32>) -> ()
    call @printMemrefF32(%udl) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}
