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

// -----

// Without the float-add capability in the target environment the atomic is
// a located error, not a silent miscompile.
module attributes {gpu.container_module} {
  gpu.module @no_float_atomics attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader], [SPV_KHR_storage_buffer_storage_class]>, #spirv.resource_limits<>>} {
    gpu.func @k(%A: memref<?xf32>, %s: f32) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
      %c0 = arith.constant 0 : index
      // expected-error @below {{'memref.atomic_rmw' op needs the AtomicFloat32AddEXT capability and SPV_EXT_shader_atomic_float_add in the SPIR-V target environment}}
      // expected-error @below {{failed to legalize operation 'memref.atomic_rmw'}}
      %old = memref.atomic_rmw addf %s, %A[%c0] : (f32, memref<?xf32>) -> f32
      gpu.return
    }
  }
}

