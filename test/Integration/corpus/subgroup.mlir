// Corpus: subgroup shuffles in every mode and a subgroup reduction.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm80
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm90
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=32 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// MSL: simd_shuffle
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shuffles(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %c1 = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %a, %va = gpu.shuffle xor %x, %c1, %w : f32
      %b, %vb = gpu.shuffle down %a, %c1, %w : f32
      %c, %vc = gpu.shuffle up %b, %c1, %w : f32
      %d, %vd = gpu.shuffle idx %c, %c1, %w : f32
      %r = gpu.subgroup_reduce add %d : (f32) -> f32
      memref.store %r, %Y[%i] : memref<?xf32>
      gpu.return
    }
  }
}
