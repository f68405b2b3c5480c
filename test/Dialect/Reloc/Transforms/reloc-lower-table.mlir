// reloc-lower=strategy=table: every function using records, directly or
// through calls, gets one trailing memref parameter per record in key order,
// marked with the key; calls pass them on, and kernels get the objects as
// extra buffer bindings. Dynamic shapes are fine (runtime arrays).
// RUN: nabla-opt %s -split-input-file --reloc-lower=strategy=table -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK-NOT: reloc.global
// CHECK: func.func @lookup(%[[I:.*]]: index, %[[A:.*]]: memref<4xf32> {reloc.key = "host.a"}, %[[B:.*]]: memref<?xf32> {reloc.key = "host.b"}) -> f32
// CHECK:   memref.load %[[A]][%[[I]]]
// CHECK:   memref.load %[[B]][%[[I]]]
// CHECK: gpu.func @k(%[[OUT:.*]]: memref<?xf32>, %[[KA:.*]]: memref<4xf32> {reloc.key = "host.a"}, %[[KB:.*]]: memref<?xf32> {reloc.key = "host.b"}) kernel
// CHECK:   func.call @lookup(%{{.*}}, %[[KA]], %[[KB]])
// CHECK: gpu.func @plain(%{{.*}}: memref<?xf32>) kernel
gpu.module @kernels {
  reloc.global @b : memref<?xf32> {key = "host.b", constant}
  reloc.global @a : memref<4xf32> {key = "host.a", constant}
  func.func @lookup(%i: index) -> f32 {
    %b = reloc.get_global @b : memref<?xf32>
    %a = reloc.get_global @a : memref<4xf32>
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %b[%i] : memref<?xf32>
    %s = arith.addf %x, %y : f32
    return %s : f32
  }
  gpu.func @k(%out: memref<?xf32>) kernel {
    %i = gpu.thread_id x
    %v = func.call @lookup(%i) : (index) -> f32
    memref.store %v, %out[%i] : memref<?xf32>
    gpu.return
  }
  gpu.func @plain(%out: memref<?xf32>) kernel {
    gpu.return
  }
}

// -----

gpu.module @pointers {
  // expected-error @below {{'reloc.global' op cannot go into a table: table bindings hold memref objects (use patch, bake or defer for pointer records)}}
  reloc.global @sym : !llvm.ptr<1> {key = "Main.:x"}
  gpu.func @k() kernel {
    %p = reloc.addressof @sym : !llvm.ptr<1>
    gpu.return
  }
}
