// Diagnostics of nabla-convert-gpu-to-spirv.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-convert-gpu-to-spirv
// RUN: not nabla-opt %s --nabla-convert-gpu-to-spirv=client=opencl 2>&1 | FileCheck %s --check-prefix=CLIENT
// CLIENT: unknown SPIR-V client 'opencl' (expected vulkan or metal)

// No workgroup size from the option or known_block_size.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'gpu.func' op needs a workgroup size for SPIR-V: set known_block_size or the pipeline's workgroup-size (the launch's block size)}}
    gpu.func @k(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
