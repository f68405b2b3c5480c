// nabla.kernel_adjoint keeps an optional buffer's presence flag (a
// frontend's null test, nabla.presence) naming that buffer at its position among
// the adjoint's parameters (after the shadows interleaved before it).
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
// CHECK: gpu.func @k_adjoint(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: i32, %{{.*}}: i32 {nabla.presence = 2 : i64})
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%y: memref<?xf32>, %b: memref<?xf32>, %n: i32, %flag: i32 {nabla.presence = 1 : i64}) kernel {
      %c0 = arith.constant 0 : i32
      %t = gpu.thread_id x
      %v = memref.load %y[%t] : memref<?xf32>
      %none = arith.cmpi eq, %flag, %c0 : i32
      %r = scf.if %none -> (f32) {
        scf.yield %v : f32
      } else {
        %bv = memref.load %b[%t] : memref<?xf32>
        %s = arith.mulf %v, %bv : f32
        scf.yield %s : f32
      }
      memref.store %r, %y[%t] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @k -> @k_adjoint {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]}
  }
}
