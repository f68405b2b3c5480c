// nabla-lower-subgroup-reduce: float subgroup reductions become butterfly
// shuffles over the subgroup size.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-lower-subgroup-reduce{subgroup-size=32}))" | FileCheck %s

// CHECK-LABEL: gpu.func @k
// CHECK-NOT: gpu.subgroup_reduce
// CHECK-COUNT-5: gpu.shuffle xor
gpu.module @kernels {
  gpu.func @k(%x: f32, %out: memref<1xf32>) kernel {
    %r = gpu.subgroup_reduce add %x : (f32) -> f32
    %c0 = arith.constant 0 : index
    memref.store %r, %out[%c0] : memref<1xf32>
    gpu.return
  }
}
