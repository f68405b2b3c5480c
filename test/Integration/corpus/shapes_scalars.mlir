// Corpus: 2-D dynamic and static memrefs, scalars of every parameter type.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm80
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm90
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// Metal has no f64: a located error naming the op and the target.
// RUN: not nabla-compile %s --target=metal --block=8,8 -o %t.metal 2>&1 | FileCheck %s --check-prefix=METAL
// HSACO: Machine: EM_AMDGPU
// METAL: shapes_scalars.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}} op uses f64, which the metal target does not support
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale2d(%A: memref<?x?xf32>, %B: memref<4x8xf64>, %s: f32, %t: f64,
                      %k: i32, %m: i64, %n: index) kernel {
      %i = gpu.global_id x
      %j = gpu.global_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rows = memref.dim %A, %c0 : memref<?x?xf32>
      %cols = memref.dim %A, %c1 : memref<?x?xf32>
      %in_i = arith.cmpi ult, %i, %rows : index
      %in_j = arith.cmpi ult, %j, %cols : index
      %in = arith.andi %in_i, %in_j : i1
      scf.if %in {
        %a = memref.load %A[%i, %j] : memref<?x?xf32>
        %kf = arith.sitofp %k : i32 to f32
        %mf = arith.sitofp %m : i64 to f32
        %nn = arith.index_cast %n : index to i32
        %nf = arith.sitofp %nn : i32 to f32
        %b0 = arith.mulf %a, %s : f32
        %b1 = arith.addf %b0, %kf : f32
        %b2 = arith.addf %b1, %mf : f32
        %b3 = arith.addf %b2, %nf : f32
        memref.store %b3, %A[%i, %j] : memref<?x?xf32>
      }
      // Each element of the static f64 matrix is scaled by exactly one thread.
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %bi = arith.cmpi ult, %i, %c4 : index
      %bj = arith.cmpi ult, %j, %c8 : index
      %bin = arith.andi %bi, %bj : i1
      scf.if %bin {
        %bv = memref.load %B[%i, %j] : memref<4x8xf64>
        %bt = arith.mulf %bv, %t : f64
        memref.store %bt, %B[%i, %j] : memref<4x8xf64>
      }
      gpu.return
    }
  }
}
