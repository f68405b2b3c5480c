// Corpus: a kernel reading a relocated constant host table (no contents in the
// IR: nabla-run --reloc=host.coeffs=FILE.npy provides them, see
// test_run_kernels.py). Deferring the record works without contents; the
// pipelines refuse the unlowered record with a located error.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(reloc-lower{strategy=defer})" -o %t.deferred.mlir
// RUN: not nabla-compile %s --target=spirv --block=64 -o %t 2>&1 | FileCheck %s
// CHECK: error: 'reloc.global' op cannot be lowered by the spirv target: relocation ops must be lowered by --reloc-lower first
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant}
    gpu.func @scale(%A: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c4 = arith.constant 4 : index
        %k = arith.remui %i, %c4 : index
        %t = reloc.get_global @coeffs : memref<4xf32>
        %c = memref.load %t[%k] : memref<4xf32>
        %a = memref.load %A[%i] : memref<?xf32>
        %p = arith.mulf %a, %c : f32
        memref.store %p, %A[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
