// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @kernels

// A tiled matmul with 16 x 16 workgroup tiles overwritten every iteration of
// a run-time K loop (no hint): the combined adjoint tapes the loop in the
// global tape (runtime-owned), the split halves in the caller's tape; both
// give the same shadows (test_split_mode.py).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @matmul(%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>, %n: index)
        workgroup(%As: memref<16x16xf32, #gpu.address_space<workgroup>>,
                  %Bs: memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %steps = arith.divui %n, %c16 : index
      %row0 = arith.muli %by, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col0 = arith.muli %bx, %c16 : index
      %col = arith.addi %col0, %tx : index
      %rown = arith.muli %row, %n : index
      %zero = arith.constant 0.0 : f32
      %acc = scf.for %s = %c0 to %steps step %c1 iter_args(%sum = %zero) -> (f32) {
        %k0 = arith.muli %s, %c16 : index
        %ka = arith.addi %k0, %tx : index
        %kb = arith.addi %k0, %ty : index
        %ia = arith.addi %rown, %ka : index
        %kbn = arith.muli %kb, %n : index
        %ib = arith.addi %kbn, %col : index
        %a = memref.load %A[%ia] : memref<?xf32>
        %b = memref.load %B[%ib] : memref<?xf32>
        memref.store %a, %As[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        memref.store %b, %Bs[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %part = scf.for %k = %c0 to %c16 step %c1 iter_args(%p = %sum) -> (f32) {
          %x = memref.load %As[%ty, %k] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %Bs[%k, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %xy = arith.mulf %x, %y : f32
          %p2 = arith.addf %p, %xy : f32
          scf.yield %p2 : f32
        }
        gpu.barrier
        scf.yield %part : f32
      }
      %ic = arith.addi %rown, %col : index
      memref.store %acc, %C[%ic] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @matmul -> @matmul_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>]}
    nabla.kernel_adjoint @matmul -> @matmul_fwd reverse @matmul_rev
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>]}
  }
}
