// Corpus: subgroup shuffles in every mode (width: the subgroup size, so the
// kernel is target-neutral) and a subgroup reduction.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm80
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm90
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=32 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// MSL: simd_shuffle
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Y = [xor 1, down 1 (-1 where invalid), up 1 (-1 where invalid), idx 0]
    // of X, four outputs per lane.
    gpu.func @shuffles(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %size = gpu.subgroup_size : index
      %w = arith.index_cast %size : index to i32
      %one = arith.constant 1 : i32
      %zero = arith.constant 0 : i32
      %invalid = arith.constant -1.0 : f32
      %a, %va = gpu.shuffle xor %x, %one, %w : f32
      %b, %vb = gpu.shuffle down %x, %one, %w : f32
      %c, %vc = gpu.shuffle up %x, %one, %w : f32
      %d, %vd = gpu.shuffle idx %x, %zero, %w : f32
      %bs = arith.select %vb, %b, %invalid : f32
      %cs = arith.select %vc, %c, %invalid : f32
      %c4 = arith.constant 4 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %o0 = arith.muli %i, %c4 : index
      %o1 = arith.addi %o0, %c1 : index
      %o2 = arith.addi %o0, %c2 : index
      %o3 = arith.addi %o0, %c3 : index
      memref.store %a, %Y[%o0] : memref<?xf32>
      memref.store %bs, %Y[%o1] : memref<?xf32>
      memref.store %cs, %Y[%o2] : memref<?xf32>
      memref.store %d, %Y[%o3] : memref<?xf32>
      gpu.return
    }
    // Y[i] = the sum of X over i's subgroup.
    gpu.func @subgroup_sum(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %r = gpu.subgroup_reduce add %x : (f32) -> f32
      memref.store %r, %Y[%i] : memref<?xf32>
      gpu.return
    }
  }
}
