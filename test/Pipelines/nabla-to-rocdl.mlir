// nabla-to-rocdl: hsaco (an AMDGPU ELF) with math linked from ocml.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-rocdl{chip=gfx90a})" | FileCheck %s
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-rocdl{chip=gfx1100 wave64=false})" | FileCheck %s --check-prefix=RDNA

// CHECK: gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx90a">, bin = "\7FELF
// RDNA: #rocdl.target<chip = "gfx1100", flags = {no_wave64}>, bin = "\7FELF
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%c0] : memref<?xf32>
      %s = math.sin %a : f32
      memref.store %s, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
