// reloc-lower=strategy=bake: known addresses become constants; records that
// cannot be baked are named; unused records are pruned.
// RUN: nabla-opt %s -split-input-file --reloc-lower=strategy=bake -verify-diagnostics | FileCheck %s
// RUN: not nabla-opt %s --reloc-lower=strategy=copy 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown reloc-lower strategy 'copy' (expected bake, patch, table, materialize, defer or bake-or-materialize)

// CHECK-LABEL: gpu.module @v1
// CHECK-NOT: reloc.
// CHECK: %[[A:.*]] = llvm.mlir.constant(140737488355328 : i64) : i64
// CHECK: %[[P:.*]] = llvm.inttoptr %[[A]] : i64 to !llvm.ptr<1>
// CHECK: llvm.load %[[P]]
gpu.module @v1 {
  reloc.global @tag : !llvm.ptr<1> {key = "Core.Int64", constant, address = 140737488355328}
  gpu.func @k() kernel {
    %p = reloc.addressof @tag : !llvm.ptr<1>
    %v = llvm.load %p : !llvm.ptr<1> -> f32
    gpu.return
  }
}

// -----

// A record nothing uses is pruned, even one no strategy could lower.
// CHECK-LABEL: gpu.module @pruned
// CHECK-NOT: reloc.global
// CHECK: gpu.func @k
gpu.module @pruned {
  reloc.global @unused : memref<4xf32> {key = "host.unused", constant}
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

gpu.module @tables {
  // expected-error @below {{'reloc.global' op cannot be baked: only pointer records have a bakeable address (use materialize or defer for memrefs)}}
  reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant, value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
  gpu.func @k() kernel {
    %c = reloc.get_global @coeffs : memref<4xf32>
    gpu.return
  }
}

// -----

gpu.module @unknown {
  // expected-error @below {{'reloc.global' op has no known address to bake (the v1 convention needs 'address')}}
  reloc.global @sym : !llvm.ptr<1> {key = "Main.:x"}
  gpu.func @k() kernel {
    %p = reloc.addressof @sym : !llvm.ptr<1>
    gpu.return
  }
}
