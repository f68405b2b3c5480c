// nabla-lower-subgroup-barrier: __syncwarp for NVVM (bar.warp.sync over the
// whole warp) and AMDGPU (a wave barrier between wavefront-scope fences).
// RUN: nabla-opt %s --pass-pipeline='builtin.module(gpu.module(nabla-lower-subgroup-barrier{target=nvvm}))' | FileCheck %s --check-prefix=NVVM
// RUN: nabla-opt %s --pass-pipeline='builtin.module(gpu.module(nabla-lower-subgroup-barrier{target=rocdl}))' | FileCheck %s --check-prefix=ROCDL
// RUN: not nabla-opt %s --pass-pipeline='builtin.module(gpu.module(nabla-lower-subgroup-barrier{target=spirv}))' 2>&1 | FileCheck %s --check-prefix=TARGET

// NVVM-LABEL: gpu.func @k
// NVVM: %[[ALL:.*]] = llvm.mlir.constant(-1 : i32) : i32
// NVVM-NEXT: nvvm.bar.warp.sync %[[ALL]] : i32
// NVVM-NOT: nabla.subgroup_barrier
// ROCDL-LABEL: gpu.func @k
// ROCDL: llvm.fence syncscope("wavefront") release
// ROCDL-NEXT: llvm.call_intrinsic "llvm.amdgcn.wave.barrier"() : () -> ()
// ROCDL-NEXT: llvm.fence syncscope("wavefront") acquire
// ROCDL-NOT: nabla.subgroup_barrier
// TARGET: error: unknown target 'spirv' for nabla-lower-subgroup-barrier (expected nvvm or rocdl)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%X: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %v = memref.load %X[%t] : memref<?xf32>
      nabla.subgroup_barrier
      memref.store %v, %X[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
