// reloc-lower=strategy=bake-or-materialize (what abi=v1 uses): pointer
// records are baked, memref records materialized, the rest is an error.
// RUN: nabla-opt %s -split-input-file --reloc-lower=strategy=bake-or-materialize -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.module @v1
// CHECK: memref.global "private" constant @coeffs : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK: llvm.inttoptr
// CHECK: memref.get_global @coeffs
// CHECK-NOT: reloc.
gpu.module @v1 {
  reloc.global @tag : !llvm.ptr<1> {key = "Core.Int64", constant, address = 4096}
  reloc.global @coeffs : memref<2xf32> {key = "host.coeffs", constant, value = dense<[1.0, 2.0]> : tensor<2xf32>}
  gpu.func @k() kernel {
    %p = reloc.addressof @tag : !llvm.ptr<1>
    %c = reloc.get_global @coeffs : memref<2xf32>
    gpu.return
  }
}

// -----

// Without contents a memref record cannot be part of a v1 binary.
gpu.module @symbolic {
  // expected-error @below {{'reloc.global' op cannot be materialized: it needs a statically shaped memref type and a known 'value'}}
  reloc.global @coeffs : memref<2xf32> {key = "host.coeffs", constant}
  gpu.func @k() kernel {
    %c = reloc.get_global @coeffs : memref<2xf32>
    gpu.return
  }
}
