// nabla-lower-host-to-llvm: host code calls the mgpu* API; a module without
// GPU host code is left alone.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-lower-host-to-llvm | FileCheck %s

// CHECK-LABEL: llvm.func @main
// CHECK: llvm.call @mgpuStreamCreate
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: llvm.call @mgpuMemcpy
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @kernels::@k
// CHECK: llvm.call @mgpuMemFree
// CHECK: llvm.call @mgpuStreamSynchronize
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#spirv.target_env<#spirv.vce<v1.0, [Shader], []>, #spirv.resource_limits<>>, bin = "\03\02#\07">]
  func.func @main(%h: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %d = gpu.alloc () : memref<4xf32>
    gpu.memcpy %d, %h : memref<4xf32>, memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%d : memref<4xf32>)
    gpu.dealloc %d : memref<4xf32>
    return
  }
}

// -----

// CHECK-LABEL: func.func @no_gpu
// CHECK-NEXT: return
module {
  func.func @no_gpu() {
    return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{was not compiled to a gpu.binary before the host code that launches it was lowered}}
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
