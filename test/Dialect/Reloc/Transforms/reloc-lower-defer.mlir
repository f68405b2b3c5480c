// reloc-lower=strategy=defer: records become external symbols named after
// their keys, marked with the key, for the frontend to resolve; the result
// passes nabla-validate (the records are the frontend's to resolve).
// RUN: nabla-opt %s --reloc-lower=strategy=defer | FileCheck %s
// RUN: nabla-opt %s --reloc-lower=strategy=defer --nabla-validate -o /dev/null

// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: llvm.mlir.global external constant @Core_Int64() {addr_space = 1 : i32, reloc.key = "Core.Int64"} : i8
// CHECK-DAG: memref.global "public" constant @host_coeffs : memref<4xf32> {reloc.key = "host.coeffs"}
// CHECK: %[[P:.*]] = llvm.mlir.addressof @Core_Int64 : !llvm.ptr<1>
// CHECK: llvm.load %[[P]]
// CHECK: memref.get_global @host_coeffs : memref<4xf32>
// CHECK-NOT: reloc.
gpu.module @kernels {
  reloc.global @tag : !llvm.ptr<1> {key = "Core.Int64", constant}
  reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant}
  gpu.func @k() kernel {
    %p = reloc.addressof @tag : !llvm.ptr<1>
    %v = llvm.load %p : !llvm.ptr<1> -> f32
    %c = reloc.get_global @coeffs : memref<4xf32>
    %c0 = arith.constant 0 : index
    %x = memref.load %c[%c0] : memref<4xf32>
    gpu.return
  }
}
