// Corpus: scf.for with iter_args, cf branches in a called function with a
// result, subview, integer atomics.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm80
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm90
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// MSL: kernel void poly(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @clamp(%x: f32, %lo: f32) -> f32 {
      %below = arith.cmpf olt, %x, %lo : f32
      cf.cond_br %below, ^low, ^done(%x : f32)
    ^low:
      cf.br ^done(%lo : f32)
    ^done(%r: f32):
      return %r : f32
    }
    gpu.func @poly(%X: memref<?xf32>, %C: memref<?xf32>, %count: memref<?xi32>, %n: index) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %coeffs = memref.subview %C[1] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: 1>>
        %p = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
          %ck = memref.load %coeffs[%k] : memref<4xf32, strided<[1], offset: 1>>
          %m = arith.mulf %acc, %x : f32
          %s = arith.addf %m, %ck : f32
          scf.yield %s : f32
        }
        %clamped = func.call @clamp(%p, %zero) : (f32, f32) -> f32
        memref.store %clamped, %X[%i] : memref<?xf32>
        %one = arith.constant 1 : i32
        %old = memref.atomic_rmw addi %one, %count[%c0] : (i32, memref<?xi32>) -> i32
      }
      gpu.return
    }
  }
}
