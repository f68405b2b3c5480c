// Block-level kernels differentiated as whole kernels (nabla.kernel_adjoint:
// the workgroup tiles get zeroed shadow attributions): a softmax row kernel
// with block-wide max and sum tree reductions through workgroup memory and
// barriers, a layer-norm row kernel (two block-wide moments), a sequential
// block reduction (thread 0 sums the tile), and a shared-memory tiled 1-D stencil with halo loads. Checked by
// test_gradients_workgroup.py on lavapipe against the analytic Jacobians.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64 emulate-float-atomics=true})" -o %t.metal.mlir
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // One block of 64 threads per row: Y = softmax(X) along the row.
    gpu.func @softmax(%X: memref<?xf32>, %Y: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %c32 = arith.constant 32 : index
      %x = memref.load %X[%i] : memref<?xf32>
      memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %m = arith.maximumf %a, %b : f32
          memref.store %m, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %max = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %d = arith.subf %x, %max : f32
      %e = math.exp %d : f32
      memref.store %e, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %a, %b : f32
          memref.store %sum, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %total = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %y = arith.divf %e, %total : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @softmax -> @softmax_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}

    // One block of 64 threads per row: Y = (X - mean) / sqrt(var + 1e-5),
    // both moments by tree sums through workgroup memory.
    gpu.func @layernorm(%X: memref<?xf32>, %Y: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %c32 = arith.constant 32 : index
      %inv = arith.constant 0.015625 : f32
      %x = memref.load %X[%i] : memref<?xf32>
      memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k1 = %c0 to %c6 step %c1 {
        %s1 = arith.shrui %c32, %k1 : index
        %active1 = arith.cmpi ult, %t, %s1 : index
        scf.if %active1 {
          %j1 = arith.addi %t, %s1 : index
          %a1 = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b1 = memref.load %tile[%j1] : memref<64xf32, #gpu.address_space<workgroup>>
          %r1 = arith.addf %a1, %b1 : f32
          memref.store %r1, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %sum = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %mean = arith.mulf %sum, %inv : f32
      gpu.barrier
      %d = arith.subf %x, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      memref.store %d2, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k2 = %c0 to %c6 step %c1 {
        %s2 = arith.shrui %c32, %k2 : index
        %active2 = arith.cmpi ult, %t, %s2 : index
        scf.if %active2 {
          %j2 = arith.addi %t, %s2 : index
          %a2 = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b2 = memref.load %tile[%j2] : memref<64xf32, #gpu.address_space<workgroup>>
          %r2 = arith.addf %a2, %b2 : f32
          memref.store %r2, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %ssq = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %var = arith.mulf %ssq, %inv : f32
      %eps = arith.constant 1.0e-5 : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %y = arith.mulf %d, %rs : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @layernorm -> @layernorm_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}

    // Out[block] = sum of the block's X^2, accumulated sequentially by thread
    // 0 over the tile after a barrier.
    gpu.func @sequential(%X: memref<?xf32>, %Out: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %blk = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %x = memref.load %X[%i] : memref<?xf32>
      %x2 = arith.mulf %x, %x : f32
      memref.store %x2, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %zero = arith.constant 0.0 : f32
        %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
          %v = memref.load %tile[%k] : memref<64xf32, #gpu.address_space<workgroup>>
          %a = arith.addf %acc, %v : f32
          scf.yield %a : f32
        }
        memref.store %sum, %Out[%blk] : memref<?xf32>
      }
      gpu.return
    }
    nabla.kernel_adjoint @sequential -> @sequential_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}

    // Y[g] = 0.25 X[g-1] + 0.5 X[g] + 0.25 X[g+1] through a tile with halos
    // (X has n + 2 elements: one padding element on each side).
    gpu.func @stencil(%X: memref<?xf32>, %Y: memref<?xf32>)
        workgroup(%tile: memref<66xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %g = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c63 = arith.constant 63 : index
      %t1 = arith.addi %t, %c1 : index
      %g1 = arith.addi %g, %c1 : index
      %x = memref.load %X[%g1] : memref<?xf32>
      memref.store %x, %tile[%t1] : memref<66xf32, #gpu.address_space<workgroup>>
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %l = memref.load %X[%g] : memref<?xf32>
        memref.store %l, %tile[%c0] : memref<66xf32, #gpu.address_space<workgroup>>
      }
      %last = arith.cmpi eq, %t, %c63 : index
      scf.if %last {
        %g2 = arith.addi %g, %c2 : index
        %r = memref.load %X[%g2] : memref<?xf32>
        %c65 = arith.constant 65 : index
        memref.store %r, %tile[%c65] : memref<66xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %t2 = arith.addi %t, %c2 : index
      %a = memref.load %tile[%t] : memref<66xf32, #gpu.address_space<workgroup>>
      %b = memref.load %tile[%t1] : memref<66xf32, #gpu.address_space<workgroup>>
      %c = memref.load %tile[%t2] : memref<66xf32, #gpu.address_space<workgroup>>
      %q = arith.constant 0.25 : f32
      %h = arith.constant 0.5 : f32
      %qa = arith.mulf %q, %a : f32
      %hb = arith.mulf %h, %b : f32
      %qc = arith.mulf %q, %c : f32
      %s1 = arith.addf %qa, %hb : f32
      %s2 = arith.addf %s1, %qc : f32
      memref.store %s2, %Y[%g] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @stencil -> @stencil_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}

    // C = A B (16 x 16) with 8 x 8 workgroup tiles and an 8 x 8 block: each
    // thread computes C[row][col] over 2 tile steps (static trip counts: the
    // per-thread tapes of the nested loops are fixed-size).
    gpu.func @matmul(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>)
        workgroup(%As: memref<8x8xf32, #gpu.address_space<workgroup>>,
                  %Bs: memref<8x8xf32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %steps = arith.constant 2 : index
      %row0 = arith.muli %by, %c8 : index
      %row = arith.addi %row0, %ty : index
      %col0 = arith.muli %bx, %c8 : index
      %col = arith.addi %col0, %tx : index
      %zero = arith.constant 0.0 : f32
      %acc = scf.for %s = %c0 to %steps step %c1 iter_args(%sum = %zero) -> (f32) {
        %k0 = arith.muli %s, %c8 : index
        %ka = arith.addi %k0, %tx : index
        %kb = arith.addi %k0, %ty : index
        %a = memref.load %A[%row, %ka] : memref<16x16xf32>
        %b = memref.load %B[%kb, %col] : memref<16x16xf32>
        memref.store %a, %As[%ty, %tx] : memref<8x8xf32, #gpu.address_space<workgroup>>
        memref.store %b, %Bs[%ty, %tx] : memref<8x8xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %part = scf.for %k = %c0 to %c8 step %c1 iter_args(%p = %sum) -> (f32) {
          %x = memref.load %As[%ty, %k] : memref<8x8xf32, #gpu.address_space<workgroup>>
          %y = memref.load %Bs[%k, %tx] : memref<8x8xf32, #gpu.address_space<workgroup>>
          %xy = arith.mulf %x, %y : f32
          %p2 = arith.addf %p, %xy : f32
          scf.yield %p2 : f32
        }
        gpu.barrier
        scf.yield %part : f32
      }
      memref.store %acc, %C[%row, %col] : memref<16x16xf32>
      gpu.return
    }
    nabla.kernel_adjoint @matmul -> @matmul_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>]}
  }
}
