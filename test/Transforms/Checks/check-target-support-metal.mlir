// Metal-specific limits: no f64 (threadgroup float atomics are accepted: the
// SPIR-V conversion emulates them).
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support=target=metal
// RUN: not nabla-opt %s --nabla-check-target-support="target=nvvm chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not nabla-opt %s --nabla-check-target-support="target=spirv abi=v3" 2>&1 | FileCheck %s --check-prefix=ABI
// CHIP: error: invalid chip 'gfx90a' for the nvvm target (expected sm_NN, e.g. sm_90)
// ABI: error: unknown abi 'v3' (expected v1 or v2)

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf64>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{'memref.load' op uses f64, which the metal target does not support}}
      %x = memref.load %A[%c0] : memref<?xf64>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%v: f32) workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %old = memref.atomic_rmw addf %v, %tile[%c0] : (f32, memref<8xf32, #gpu.address_space<workgroup>>) -> f32
      gpu.return
    }
  }
}

