// Corpus: math.fpowi with exponents known only at run time (a buffer of
// i32), on f64 and f32, and the reverse mode of the f64 one (whose
// derivative n x^(n-1) needs x^(n-1) at run time too). SPIR-V has no x^n:
// difftest found f64 reaching an invalid spirv.GL.Pow (seed 20003); the
// exponent loop must match compiler-rt's __powidf2, which the CPU uses.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @pow_f64(%X: memref<?xf64>, %N: memref<?xi32>, %Y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf64>
        %e = memref.load %N[%i] : memref<?xi32>
        %y = math.fpowi %x, %e : f64, i32
        memref.store %y, %Y[%i] : memref<?xf64>
      }
      gpu.return
    }
    gpu.func @pow_f32(%X: memref<?xf32>, %N: memref<?xi32>, %Y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %e = memref.load %N[%i] : memref<?xi32>
        %y = math.fpowi %x, %e : f32, i32
        memref.store %y, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
    nabla.kernel_adjoint @pow_f64 -> @pow_f64_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<dup>, #nabla.activity<const>]}
  }
}
