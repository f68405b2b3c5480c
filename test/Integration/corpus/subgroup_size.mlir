// Corpus: subgroup size and id queries (the shuffle tests' reference needs
// the device's subgroup size).
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @subgroup_info(%Out: memref<?xi32>) kernel {
      %i = gpu.global_id x
      %s = gpu.subgroup_size : index
      %l = gpu.lane_id
      %c2 = arith.constant 2 : index
      %i2 = arith.muli %i, %c2 : index
      %i2p1 = arith.addi %i2, %c2 : index
      %c1 = arith.constant 1 : index
      %slot = arith.subi %i2p1, %c1 : index
      %s32 = arith.index_cast %s : index to i32
      %l32 = arith.index_cast %l : index to i32
      memref.store %s32, %Out[%i2] : memref<?xi32>
      memref.store %l32, %Out[%slot] : memref<?xi32>
      gpu.return
    }
  }
}
