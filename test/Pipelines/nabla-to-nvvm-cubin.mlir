// nabla-to-nvvm with ptxas: the binary holds the PTX and a cubin (an ELF).
// REQUIRES: ptxas
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm{chip=sm_90})" | FileCheck %s

// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx78">, {{.*}}assembly = "
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx78">, {{.*}}bin = "\7FELF
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%c0] : memref<?xf32>
      %e = math.exp %a : f32
      memref.store %e, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
