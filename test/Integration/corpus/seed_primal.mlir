// Corpus: the seed's primal kernel (device function called from a kernel).
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm80
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm90
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// MSL: kernel void mul_kernel(
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
