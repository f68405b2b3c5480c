// Round trips of reloc.global records and their uses, custom and generic form.
// RUN: nabla-opt %s -split-input-file | nabla-opt -split-input-file | FileCheck %s
// RUN: nabla-opt %s -split-input-file -mlir-print-op-generic | nabla-opt -split-input-file | FileCheck %s

// The DESIGN.md example: a memref record and a pointer record in a gpu.module.
module attributes {gpu.container_module} {
  // CHECK-LABEL: gpu.module @kernels
  gpu.module @kernels {
    // CHECK: reloc.global @coeffs : memref<8xf32> {constant, key = "host.coeffs"}
    reloc.global @coeffs : memref<8xf32> {key = "host.coeffs", constant}
    // CHECK: reloc.global @sym_x : !llvm.ptr<1> {constant, key = "Main.:x"}
    reloc.global @sym_x : !llvm.ptr<1> {key = "Main.:x", constant}
    // CHECK-LABEL: func.func @f
    func.func @f() -> (memref<8xf32>, !llvm.ptr<1>) {
      // CHECK: %[[C:.*]] = reloc.get_global @coeffs : memref<8xf32>
      %c = reloc.get_global @coeffs : memref<8xf32>
      // CHECK: %[[P:.*]] = reloc.addressof @sym_x : !llvm.ptr<1>
      %p = reloc.addressof @sym_x : !llvm.ptr<1>
      // CHECK: return %[[C]], %[[P]]
      return %c, %p : memref<8xf32>, !llvm.ptr<1>
    }
  }
}

// -----

// Every record field: word kind with offset, explicit size, known value bytes,
// a known (v1) address, and a shadow pairing.
// CHECK-LABEL: module
// CHECK: reloc.global @tag : !llvm.ptr<1> {key = "Core.Int64", kind = #reloc.kind<word>, offset = 8 : i64}
reloc.global @tag : !llvm.ptr<1> {key = "Core.Int64", kind = #reloc.kind<word>, offset = 8}
// CHECK: reloc.global @table : memref<4xf32> {address = 140737488355328 : i64, constant, key = "host.table", value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}
reloc.global @table : memref<4xf32> {key = "host.table", constant, address = 140737488355328,
                                     value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
// CHECK: reloc.global @blob : !llvm.ptr {key = "host.blob", size = 4 : i64, value = dense<[0, 0, -128, 63]> : tensor<4xi8>}
reloc.global @blob : !llvm.ptr {key = "host.blob", size = 4, value = dense<[0, 0, -128, 63]> : tensor<4xi8>}
// CHECK: reloc.global @state : memref<?xf64> {key = "Main.state"}
reloc.global @state : memref<?xf64> {key = "Main.state", kind = #reloc.kind<object>}
// CHECK: reloc.global @d_state : memref<?xf64> {key = "Main.state#shadow", shadow_of = @state}
reloc.global @d_state : memref<?xf64> {key = "Main.state#shadow", shadow_of = @state}

// -----

// Uses are pure: CSE merges repeated references to one record.
// RUN: nabla-opt %s -split-input-file -cse | FileCheck %s --check-prefix=CSE
reloc.global @g : memref<2xi32> {key = "k"}
// CSE-LABEL: func.func @twice
func.func @twice() -> (memref<2xi32>, memref<2xi32>) {
  // CSE: %[[G:.*]] = reloc.get_global @g
  // CSE-NOT: reloc.get_global
  // CSE: return %[[G]], %[[G]]
  %a = reloc.get_global @g : memref<2xi32>
  %b = reloc.get_global @g : memref<2xi32>
  return %a, %b : memref<2xi32>, memref<2xi32>
}
