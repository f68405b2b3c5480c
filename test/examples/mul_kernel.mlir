// The seed kernel round-trips through nabla-opt, in custom and generic form.
// RUN: nabla-opt %nabla_src_root/examples/mul_kernel.mlir | FileCheck %s
// RUN: nabla-opt %nabla_src_root/examples/mul_kernel.mlir -mlir-print-op-generic | nabla-opt | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK: func.func @mul(%[[A:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[I:.*]] = gpu.global_id x
// CHECK: %[[X:.*]] = memref.load %[[A]][%[[I]]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: memref.store %[[SQ]], %[[A]][%[[I]]]
// CHECK-LABEL: gpu.func @mul_kernel
// CHECK: func.call @mul
// CHECK-LABEL: gpu.func @grad_mul_kernel(
// CHECK-SAME: %[[GA:.*]]: memref<?xf32>, %[[GDA:.*]]: memref<?xf32>, %[[GN:.*]]: index) kernel
// CHECK: nabla.autodiff @mul(%[[GA]], %[[GDA]], %[[GN]]) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
