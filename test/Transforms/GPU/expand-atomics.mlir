// nabla-expand-atomics: an integer atomic multiply (no GPU has one) becomes a
// generic_atomic_rmw whose body multiplies; other kinds stay.
// RUN: nabla-opt %s --pass-pipeline='builtin.module(gpu.module(nabla-expand-atomics))' | FileCheck %s

// CHECK-LABEL: gpu.func @k
// CHECK-SAME: (%[[A:.*]]: memref<?xi32>, %[[V:.*]]: i32, %[[I:.*]]: index)
// CHECK: %[[OLD:.*]] = memref.generic_atomic_rmw %[[A]][%[[I]]] : memref<?xi32> {
// CHECK: ^bb0(%[[CURRENT:.*]]: i32):
// CHECK:   %[[P:.*]] = arith.muli %[[CURRENT]], %[[V]] : i32
// CHECK:   memref.atomic_yield %[[P]] : i32
// CHECK: }
// CHECK: memref.store %[[OLD]], %[[A]]
// CHECK: memref.atomic_rmw addi %[[V]], %[[A]][%[[I]]]
// CHECK-NOT: memref.atomic_rmw muli
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xi32>, %v: i32, %i: index) kernel {
      %old = memref.atomic_rmw muli %v, %A[%i] : (i32, memref<?xi32>) -> i32
      memref.store %old, %A[%i] : memref<?xi32>
      %s = memref.atomic_rmw addi %v, %A[%i] : (i32, memref<?xi32>) -> i32
      gpu.return
    }
  }
}
