// Block sum trees in workgroup memory (the idiom of block reductions), each
// block summing its 64 elements of X into Out[block]. The tree's adjoint is
// a broadcast of the root's when the root alone is read after it
// (ReductionTree.cpp); `tree_and_leaf` also reads another element after the
// tree, which keeps the step-by-step reversal. Every thread loads its share
// of the row (any block size), so blocks narrower than the tree leave parts
// of it without a thread: their elements do not reach the root.
// Checked by test_reduction_trees.py on lavapipe; compiled for every target:
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/trees.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @trees {
    func.func @load_row(%X: memref<?xf32>, %tile: memref<64xf32, #gpu.address_space<workgroup>>) {
      %t = gpu.thread_id x
      %n = gpu.block_dim x
      %blk = gpu.block_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %blk, %c64 : index
      scf.for %j = %t to %c64 step %n {
        %i = arith.addi %base, %j : index
        %x = memref.load %X[%i] : memref<?xf32>
        memref.store %x, %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      return
    }

    func.func @sum_tree(%tile: memref<64xf32, #gpu.address_space<workgroup>>) {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %c32 = arith.constant 32 : index
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %b, %a : f32
          memref.store %sum, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      return
    }

    // Out[block] = the tree's root.
    gpu.func @tree_root(%X: memref<?xf32>, %Out: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %blk = gpu.block_id x
      %c0 = arith.constant 0 : index
      func.call @load_row(%X, %tile) : (memref<?xf32>, memref<64xf32, #gpu.address_space<workgroup>>) -> ()
      func.call @sum_tree(%tile) : (memref<64xf32, #gpu.address_space<workgroup>>) -> ()
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %r2 = arith.mulf %r, %r : f32
        memref.store %r2, %Out[%blk] : memref<?xf32>
      }
      gpu.return
    }
    nabla.kernel_adjoint @tree_root -> @tree_root_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @tree_root -> @tree_root_adjoint_noneed
        {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>]}

    // Out[block] = 2 * root: its adjoint needs no primal value, so with Out
    // dupnoneed the adjoint kernel computes no tree at all.
    gpu.func @tree_linear(%X: memref<?xf32>, %Out: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %blk = gpu.block_id x
      %c0 = arith.constant 0 : index
      %two = arith.constant 2.0 : f32
      func.call @load_row(%X, %tile) : (memref<?xf32>, memref<64xf32, #gpu.address_space<workgroup>>) -> ()
      func.call @sum_tree(%tile) : (memref<64xf32, #gpu.address_space<workgroup>>) -> ()
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %r2 = arith.mulf %r, %two : f32
        memref.store %r2, %Out[%blk] : memref<?xf32>
      }
      gpu.return
    }
    nabla.kernel_adjoint @tree_linear -> @tree_linear_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>]}

    // Out[block] = root * (the leftover partial sum in element 1).
    gpu.func @tree_and_leaf(%X: memref<?xf32>, %Out: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %blk = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      func.call @load_row(%X, %tile) : (memref<?xf32>, memref<64xf32, #gpu.address_space<workgroup>>) -> ()
      func.call @sum_tree(%tile) : (memref<64xf32, #gpu.address_space<workgroup>>) -> ()
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %l = memref.load %tile[%c1] : memref<64xf32, #gpu.address_space<workgroup>>
        %p = arith.mulf %r, %l : f32
        memref.store %p, %Out[%blk] : memref<?xf32>
      }
      gpu.return
    }
    nabla.kernel_adjoint @tree_and_leaf -> @tree_and_leaf_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
  }
}
