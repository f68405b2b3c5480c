// nabla.memory_fence for NVVM (membar.cta/gl/sys) and AMDGPU (a sequentially
// consistent LLVM fence at workgroup, agent or system scope), lowered by
// nabla-lower-subgroup-barrier with the subgroup barrier; SPIR-V's
// OpMemoryBarrier in test/Conversion/GPUToSPIRV/memory-fence.mlir.
// RUN: nabla-opt %s --pass-pipeline='builtin.module(gpu.module(nabla-lower-subgroup-barrier{target=nvvm}))' | FileCheck %s --check-prefix=NVVM
// RUN: nabla-opt %s --pass-pipeline='builtin.module(gpu.module(nabla-lower-subgroup-barrier{target=rocdl}))' | FileCheck %s --check-prefix=ROCDL

// NVVM-LABEL: gpu.func @k
// NVVM: nvvm.memory.barrier <cta>
// NVVM-NEXT: nvvm.memory.barrier <gpu>
// NVVM-NEXT: nvvm.memory.barrier <sys>
// NVVM-NOT: nabla.memory_fence
// ROCDL-LABEL: gpu.func @k
// ROCDL: llvm.fence syncscope("workgroup") seq_cst
// ROCDL-NEXT: llvm.fence syncscope("agent") seq_cst
// ROCDL-NEXT: llvm.fence seq_cst
// ROCDL-NOT: nabla.memory_fence
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%X: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      memref.store %f, %X[%c0] : memref<?xf32>
      nabla.memory_fence "workgroup"
      nabla.memory_fence "device"
      nabla.memory_fence "system"
      gpu.return
    }
  }
}
