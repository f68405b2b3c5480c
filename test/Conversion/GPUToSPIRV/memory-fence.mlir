// nabla-convert-gpu-to-spirv: nabla.memory_fence (__threadfence*) is an
// OpMemoryBarrier at Workgroup, Device or CrossDevice scope, acquire-release
// on workgroup and storage-buffer memory.
// RUN: nabla-opt %s --nabla-convert-gpu-to-spirv="workgroup-size=64 subgroup-size=32" | FileCheck %s

// CHECK-LABEL: spirv.func @k
// CHECK: spirv.MemoryBarrier <Workgroup>, <AcquireRelease|UniformMemory|WorkgroupMemory>
// CHECK: spirv.MemoryBarrier <Device>, <AcquireRelease|UniformMemory|WorkgroupMemory>
// CHECK: spirv.MemoryBarrier <CrossDevice>, <AcquireRelease|UniformMemory|WorkgroupMemory>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%X: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      memref.store %f, %X[%c0] : memref<64xf32>
      nabla.memory_fence "workgroup"
      nabla.memory_fence "device"
      nabla.memory_fence "system"
      gpu.return
    }
  }
}
