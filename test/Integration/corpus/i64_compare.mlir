// Corpus: comparisons of sign-extended i32 values as i64, against a constant
// and against a loaded value. lavapipe (Mesa 22.3.6) evaluated OpSLessThan of
// an OpSConvert'ed value against an i64 constant as false for negative
// values; Nabla's SPIR-V path compares such values in their own width.
// R[i] = (sext(N[i]) < M[i]) + 2 (sext(N[i]) < 0) + 4 (sext(N[i]) >= 5)
//        + 8 (-3 > sext(N[i])) + 16 (sext(N[i]) ult 7)
// RUN: nabla-compile %s --target=spirv --block=8 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%N: memref<?xi32>, %M: memref<?xi64>, %R: memref<?xi32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %e = memref.load %N[%i] : memref<?xi32>
        %w = arith.extsi %e : i32 to i64
        %m = memref.load %M[%i] : memref<?xi64>
        %c0 = arith.constant 0 : i64
        %c5 = arith.constant 5 : i64
        %cm3 = arith.constant -3 : i64
        %c7 = arith.constant 7 : i64
        %b0 = arith.cmpi slt, %w, %m : i64
        %b1 = arith.cmpi slt, %w, %c0 : i64
        %b2 = arith.cmpi sge, %w, %c5 : i64
        %b3 = arith.cmpi sgt, %cm3, %w : i64
        %b4 = arith.cmpi ult, %w, %c7 : i64
        %r0 = arith.extui %b0 : i1 to i32
        %r1 = arith.extui %b1 : i1 to i32
        %r2 = arith.extui %b2 : i1 to i32
        %r3 = arith.extui %b3 : i1 to i32
        %r4 = arith.extui %b4 : i1 to i32
        %c1i = arith.constant 1 : i32
        %s1 = arith.shli %r1, %c1i : i32
        %c2i = arith.constant 2 : i32
        %s2 = arith.shli %r2, %c2i : i32
        %c3i = arith.constant 3 : i32
        %s3 = arith.shli %r3, %c3i : i32
        %c4i = arith.constant 4 : i32
        %s4 = arith.shli %r4, %c4i : i32
        %t0 = arith.ori %r0, %s1 : i32
        %t1 = arith.ori %t0, %s2 : i32
        %t2 = arith.ori %t1, %s3 : i32
        %t3 = arith.ori %t2, %s4 : i32
        memref.store %t3, %R[%i] : memref<?xi32>
      }
      gpu.return
    }
  }
}
