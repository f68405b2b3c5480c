// Corpus: block reduction through workgroup memory with barriers, a private
// alloca, and a float atomic add of each block's sum into the output.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm80
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm90
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// MSL: threadgroup _{{[0-9]+}} _workgroup_mem
// MSL: threadgroup_barrier
// MSL: atomic_fetch_add_explicit
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @block_sum(%X: memref<?xf32>, %out: memref<?xf32>, %n: index)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %tid = gpu.thread_id x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %scratch = memref.alloca() : memref<1xf32>
      %in = arith.cmpi ult, %i, %n : index
      %x = scf.if %in -> (f32) {
        %v = memref.load %X[%i] : memref<?xf32>
        scf.yield %v : f32
      } else {
        scf.yield %zero : f32
      }
      memref.store %x, %scratch[%c0] : memref<1xf32>
      %xs = memref.load %scratch[%c0] : memref<1xf32>
      memref.store %xs, %tile[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c32 = arith.constant 32 : index
      %c2 = arith.constant 2 : index
      %final = scf.while (%stride = %c32) : (index) -> index {
        %more = arith.cmpi ugt, %stride, %c0 : index
        scf.condition(%more) %stride : index
      } do {
      ^bb0(%s: index):
        %active = arith.cmpi ult, %tid, %s : index
        scf.if %active {
          %other = arith.addi %tid, %s : index
          %a = memref.load %tile[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%other] : memref<64xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %a, %b : f32
          memref.store %sum, %tile[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
        %next = arith.divui %s, %c2 : index
        scf.yield %next : index
      }
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %total = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %old = memref.atomic_rmw addf %total, %out[%c0] : (f32, memref<?xf32>) -> f32
      }
      gpu.return
    }
  }
}
