// Corpus: every math op the pipelines support, f32, one result per op.
// REQUIRES: ptxas
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm80 && %ptxas -arch=sm_80 %t.nvvm80/kernels.ptx -o %t.sm80.cubin
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm90 && %ptxas -arch=sm_90 %t.nvvm90/kernels.ptx -o %t.sm90.cubin
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// MSL: kernel void math_kernel(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @math_kernel(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %ok = arith.cmpi ult, %i, %n : index
      scf.if %ok {
        %x = memref.load %X[%i] : memref<?xf32>
        %c1 = arith.constant 1.5 : f32
        %r0 = math.sin %x : f32
        %r1 = math.cos %x : f32
        %r2 = math.tan %x : f32
        %r3 = math.exp %x : f32
        %r4 = math.exp2 %x : f32
        %r5 = math.expm1 %x : f32
        %r6 = math.log %x : f32
        %r7 = math.log1p %x : f32
        %r8 = math.log2 %x : f32
        %r9 = math.sqrt %x : f32
        %r10 = math.rsqrt %x : f32
        %r11 = math.tanh %x : f32
        %r12 = math.powf %x, %c1 : f32
        %r13 = math.fma %x, %c1, %x : f32
        %r14 = math.absf %x : f32
        %r15 = math.erf %x : f32
        %r16 = math.atan %x : f32
        %r17 = math.atan2 %x, %c1 : f32
        %r18 = math.floor %x : f32
        %r19 = math.ceil %x : f32
        %r20 = math.log10 %x : f32
        %r21 = math.cbrt %x : f32
        %r22 = math.sinh %x : f32
        %r23 = math.cosh %x : f32
        %r24 = math.copysign %x, %c1 : f32
        %r25 = math.round %x : f32
        %two = arith.constant 2 : i32
        %r26 = math.fpowi %x, %two : f32, i32
        %s0 = arith.addf %r0, %r1 : f32
        %s1 = arith.addf %s0, %r2 : f32
        %s2 = arith.addf %s1, %r3 : f32
        %s3 = arith.addf %s2, %r4 : f32
        %s4 = arith.addf %s3, %r5 : f32
        %s5 = arith.addf %s4, %r6 : f32
        %s6 = arith.addf %s5, %r7 : f32
        %s7 = arith.addf %s6, %r8 : f32
        %s8 = arith.addf %s7, %r9 : f32
        %s9 = arith.addf %s8, %r10 : f32
        %s10 = arith.addf %s9, %r11 : f32
        %s11 = arith.addf %s10, %r12 : f32
        %s12 = arith.addf %s11, %r13 : f32
        %s13 = arith.addf %s12, %r14 : f32
        %s14 = arith.addf %s13, %r15 : f32
        %s15 = arith.addf %s14, %r16 : f32
        %s16 = arith.addf %s15, %r17 : f32
        %s17 = arith.addf %s16, %r18 : f32
        %s18 = arith.addf %s17, %r19 : f32
        %s19 = arith.addf %s18, %r20 : f32
        %s20 = arith.addf %s19, %r21 : f32
        %s21 = arith.addf %s20, %r22 : f32
        %s22 = arith.addf %s21, %r23 : f32
        %s23 = arith.addf %s22, %r24 : f32
        %s24 = arith.addf %s23, %r25 : f32
        %s25 = arith.addf %s24, %r26 : f32
        %r27 = math.asin %x : f32
        %r28 = math.acos %x : f32
        %r29 = math.asinh %x : f32
        %xp = arith.addf %x, %c1 : f32
        %r30 = math.acosh %xp : f32
        %r31 = math.atanh %x : f32
        %r32 = math.erfc %x : f32
        %s26 = arith.addf %s25, %r27 : f32
        %s27 = arith.addf %s26, %r28 : f32
        %s28 = arith.addf %s27, %r29 : f32
        %s29 = arith.addf %s28, %r30 : f32
        %s30 = arith.addf %s29, %r31 : f32
        %s31 = arith.addf %s30, %r32 : f32
        memref.store %s31, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // erfc alone, for its relative accuracy in the tail (erfc(9) ~ 4e-37),
    // where 1 - erf(x) would be 0.
    gpu.func @erfc_kernel(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %ok = arith.cmpi ult, %i, %n : index
      scf.if %ok {
        %x = memref.load %X[%i] : memref<?xf32>
        %y = math.erfc %x : f32
        memref.store %y, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
