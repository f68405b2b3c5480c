// reloc-lower=strategy=patch: a zero-initialised writable global per record,
// named from the key (with a hash keeping keys that sanitize alike apart),
// that the loader writes: the object itself for memrefs, its address in a
// pointer slot for pointer records.
// RUN: nabla-opt %s -split-input-file --reloc-lower=strategy=patch -verify-diagnostics | FileCheck %s
// RUN: nabla-opt %s -split-input-file --reloc-lower=strategy=patch -verify-diagnostics --nabla-validate | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: memref.global "public" @__reloc_a_b_[[H1:[0-9a-f]+]] : memref<4xf32> = dense<0.000000e+00> {reloc.key = "a.b"}
// CHECK-DAG: memref.global "public" @__reloc_a_b_[[H2:[0-9a-f]+]] : memref<4xf32> = dense<0.000000e+00> {reloc.key = "a_b"}
// CHECK-DAG: llvm.mlir.global external @__reloc_Main__x_{{[0-9a-f]+}}() {addr_space = 1 : i32, alignment = 8 : i64, reloc.key = "Main.:x"} : !llvm.ptr<1> {
// CHECK: gpu.func @k
// CHECK: %[[SLOT:.*]] = llvm.mlir.addressof @__reloc_Main__x_{{[0-9a-f]+}} : !llvm.ptr<1>
// CHECK: %[[P:.*]] = llvm.load %[[SLOT]] : !llvm.ptr<1> -> !llvm.ptr<1>
// CHECK: llvm.load %[[P]] : !llvm.ptr<1> -> f32
// CHECK: memref.get_global @__reloc_a_b_[[H1]]
// CHECK: memref.get_global @__reloc_a_b_[[H2]]
// CHECK-NOT: reloc.global
gpu.module @kernels {
  reloc.global @sym : !llvm.ptr<1> {key = "Main.:x", constant}
  reloc.global @dotted : memref<4xf32> {key = "a.b", constant}
  reloc.global @underscored : memref<4xf32> {key = "a_b"}
  gpu.func @k() kernel {
    %p = reloc.addressof @sym : !llvm.ptr<1>
    %v = llvm.load %p : !llvm.ptr<1> -> f32
    %d = reloc.get_global @dotted : memref<4xf32>
    %u = reloc.get_global @underscored : memref<4xf32>
    gpu.return
  }
}

// -----

gpu.module @dynamic {
  // expected-error @below {{'reloc.global' op cannot be patched: the loader copies the object into a global of fixed size, so the memref needs a static shape (use table or defer)}}
  reloc.global @data : memref<?xf32> {key = "Main.data"}
  gpu.func @k() kernel {
    %d = reloc.get_global @data : memref<?xf32>
    gpu.return
  }
}
