// nabla-to-spirv and nabla-to-metal: validated SPIR-V words, MSL source.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-spirv{workgroup-size=64})" | FileCheck %s
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64})" | FileCheck %s --check-prefix=MSL

// SPIR-V magic number 0x07230203, little endian.
// CHECK: gpu.binary @kernels [#gpu.object<#spirv.target_env<{{.*}}>, bin = "\03\02#\07
// MSL: gpu.binary @kernels [#gpu.object<#spirv.target_env<{{.*}}>, properties = {language = "msl"}, assembly = "#include <metal_stdlib>
// MSL-SAME: kernel void mul_kernel(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @mul(%A: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %inbounds = arith.cmpi ult, %i, %n : index
      scf.if %inbounds {
        %a = memref.load %A[%i] : memref<?xf32>
        %sq = arith.mulf %a, %a : f32
        memref.store %sq, %A[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @mul_kernel(%A: memref<?xf32>, %n: index) kernel {
      func.call @mul(%A, %n) : (memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
