// nabla-linearize-kernel-memrefs also moves atomics off subviews (upstream's
// alias folding handles only loads and stores): the index is resolved into
// the source, and no view is left for SPIR-V.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-linearize-kernel-memrefs))" | FileCheck %s

// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>
// CHECK: %[[I:.*]] = affine.apply
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[A]][%[[I]]] : (f32, memref<?xf32>) -> f32
gpu.module @kernels {
  gpu.func @k(%A: memref<?xf32>, %n: index, %v: f32) kernel {
    %i = gpu.thread_id x
    %view = memref.subview %A[2] [%n] [3] : memref<?xf32> to memref<?xf32, strided<[3], offset: 2>>
    %o = memref.atomic_rmw addf %v, %view[%i] : (f32, memref<?xf32, strided<[3], offset: 2>>) -> f32
    gpu.return
  }
}
