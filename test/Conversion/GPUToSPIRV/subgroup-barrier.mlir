// nabla-convert-gpu-to-spirv: __syncwarp (nabla.subgroup_barrier) is a
// Subgroup-scope control barrier where a subgroup holds a 32-lane warp, and
// the workgroup's where it holds part of one (lavapipe: 8 lanes).
// RUN: nabla-opt %s --nabla-convert-gpu-to-spirv="workgroup-size=64 subgroup-size=32" | FileCheck %s --check-prefix=WARP
// RUN: nabla-opt %s --nabla-convert-gpu-to-spirv="workgroup-size=64 subgroup-size=8" | FileCheck %s --check-prefix=NARROW

// WARP-LABEL: spirv.func @k
// WARP: spirv.ControlBarrier <Subgroup>, <Subgroup>, <AcquireRelease|UniformMemory|WorkgroupMemory>
// NARROW-LABEL: spirv.func @k
// NARROW: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|UniformMemory|WorkgroupMemory>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%X: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %X[%c0] : memref<?xf32>
      nabla.subgroup_barrier
      memref.store %v, %X[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
