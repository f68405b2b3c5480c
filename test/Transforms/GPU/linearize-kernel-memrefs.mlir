// nabla-linearize-kernel-memrefs: dynamic multi-dimensional kernel memrefs
// become 1-D buffers plus trailing sizes, before the attributions.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-linearize-kernel-memrefs))" | FileCheck %s

// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[S:[^:]*]]: f32, %[[B:[^:]*]]: memref<4x8xf32>, %[[D0:[^:]*]]: index, %[[D1:[^:]*]]: index)
// CHECK-SAME: workgroup(%[[T:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[E:.*]] = memref.expand_shape %[[A]] {{\[\[}}0, 1]] output_shape [%[[D0]], %[[D1]]] : memref<?xf32> into memref<?x?xf32>
// CHECK: memref.load %[[E]]
// CHECK: arith.index_cast %[[D1]]
gpu.module @kernels {
  gpu.func @k(%A: memref<?x?xf32>, %s: f32, %B: memref<4x8xf32>)
      workgroup(%t: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %x = memref.load %A[%c0, %c1] : memref<?x?xf32>
    %cols = memref.dim %A, %c1 : memref<?x?xf32>
    %ci = arith.index_cast %cols : index to i32
    gpu.return
  }
}

// -----

// An atomic on the restored 2-D shape indexes the flat buffer (row-major).
// CHECK-LABEL: gpu.func @atomic
// CHECK-SAME: (%[[FLAT:.*]]: memref<?xf32>, %[[V:.*]]: f32, %[[I:.*]]: index, %[[J:.*]]: index, %[[S0:.*]]: index, %[[S1:.*]]: index)
// CHECK: %[[ROW:.*]] = arith.muli %[[I]], %[[S1]] : index
// CHECK: %[[LIN:.*]] = arith.addi %[[ROW]], %[[J]] : index
// CHECK: memref.atomic_rmw addf %[[V]], %[[FLAT]][%[[LIN]]] : (f32, memref<?xf32>) -> f32
gpu.module @atomics {
  gpu.func @atomic(%A: memref<?x?xf32>, %v: f32, %i: index, %j: index) kernel {
    %old = memref.atomic_rmw addf %v, %A[%i, %j] : (f32, memref<?x?xf32>) -> f32
    gpu.return
  }
}
