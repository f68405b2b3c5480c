// Corpus: a 16-entry private buffer (memref.alloca under an scf.if, outside
// the kernel's entry block) written in one loop and read back in another at
// thread-dependent indices, so that no back end can keep it in registers.
// ROCDL must put it in private memory (address space 5) instead of aborting.
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h --notes %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=rocdl --opt-level=0 -o %t.rocdl0 && llvm-readelf -h --notes %t.rocdl0/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// HSACO: .name: scratch
// HSACO: .private_segment_fixed_size: {{[1-9][0-9]*}}
// MSL: kernel void scratch(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // X[i] = sum_k k * buf[(k + i) % 16] with buf[k] = X[i] * k + 1.
    gpu.func @scratch(%X: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %buf = memref.alloca() : memref<16xf32>
        %x = memref.load %X[%i] : memref<?xf32>
        scf.for %k = %c0 to %c16 step %c1 {
          %ki = arith.index_cast %k : index to i32
          %kf = arith.sitofp %ki : i32 to f32
          %xk = arith.mulf %x, %kf : f32
          %v = arith.addf %xk, %one : f32
          memref.store %v, %buf[%k] : memref<16xf32>
        }
        %s = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
          %ki = arith.addi %k, %i : index
          %j = arith.remui %ki, %c16 : index
          %v = memref.load %buf[%j] : memref<16xf32>
          %kk = arith.index_cast %k : index to i32
          %kf = arith.sitofp %kk : i32 to f32
          %w = arith.mulf %v, %kf : f32
          %a = arith.addf %acc, %w : f32
          scf.yield %a : f32
        }
        memref.store %s, %X[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
