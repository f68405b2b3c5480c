// reloc-lower=strategy=materialize: known contents become a constant global.
// RUN: nabla-opt %s -split-input-file --reloc-lower=strategy=materialize -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.module @tables
// CHECK: memref.global "private" constant @coeffs : memref<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK: memref.get_global @coeffs : memref<4xf32>
// CHECK-NOT: reloc.
gpu.module @tables {
  reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant, value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
  gpu.func @k() kernel {
    %c = reloc.get_global @coeffs : memref<4xf32>
    gpu.return
  }
}

// -----

gpu.module @pointer {
  // expected-error @below {{'reloc.global' op cannot be materialized: it needs a statically shaped memref type and a known 'value'}}
  reloc.global @sym : !llvm.ptr<1> {key = "Main.:x"}
  gpu.func @k() kernel {
    %p = reloc.addressof @sym : !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A writable object is never materialized: a private copy would lose writes.
gpu.module @writable {
  // expected-error @below {{'reloc.global' op cannot be materialized: the kernels may write it, and a private copy would lose the writes (use patch, table or defer)}}
  reloc.global @state : memref<4xf32> {key = "Main.state", value = dense<0.0> : tensor<4xf32>}
  gpu.func @k() kernel {
    %s = reloc.get_global @state : memref<4xf32>
    gpu.return
  }
}
