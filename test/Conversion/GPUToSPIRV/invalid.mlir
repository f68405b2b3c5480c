// Diagnostics of nabla-convert-gpu-to-spirv.
// RUN: not nabla-opt %s --nabla-convert-gpu-to-spirv=client=opencl 2>&1 | FileCheck %s --check-prefix=CLIENT
// CLIENT: unknown SPIR-V client 'opencl' (expected vulkan or metal)

// (A kernel without a workgroup size is no longer an error: see
// specialized-workgroup-size.mlir.)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
