// Corpus: a kernel whose work is a parameter, for the timing tests. Each
// thread i < n runs m*m dependent multiply-adds on X[i] (a nested loop: a
// single loop of 10^5 iterations would meet lavapipe's 65 535-iteration
// limit), so m = 1 is a trivial kernel and m = 320 about 10^5 steps per
// thread. acc <- acc * x + 1 with |x| < 1 stays finite: every repeat runs at
// the same speed.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// HSACO: Machine: EM_AMDGPU
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @spin(%X: memref<?xf32>, %m: index, %n: index) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1.0 : f32
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %outer = scf.for %j = %c0 to %m step %c1 iter_args(%a = %x) -> (f32) {
          %inner = scf.for %k = %c0 to %m step %c1 iter_args(%b = %a) -> (f32) {
            %p = arith.mulf %b, %x : f32
            %s = arith.addf %p, %one : f32
            scf.yield %s : f32
          }
          scf.yield %inner : f32
        }
        memref.store %outer, %X[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
