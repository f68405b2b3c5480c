// Reverse and forward mode through GPU parallelism (f32), checked by
// test_gradients_{subgroup,workgroup,accumulation}.py on lavapipe: a butterfly reduction with shuffle xor, a
// neighbour exchange with shuffle down/up, subgroup_reduce add and maximumf
// (ties: the lowest lane wins), a
// histogram with primal atomics, and a
// block tree reduction through workgroup memory with barriers (the shadow of
// the workgroup tile is a second attribution the kernel zeroes first).
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64 emulate-float-atomics=true})" -o %t.metal.mlir
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
// The reverse sweep replays the tree's barriers and transposes the shuffles.
// CHECK-LABEL: func.func private @__nabla_vjp_butterfly_dd
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK-LABEL: func.func private @__nabla_vjp_neighbours_dd
// CHECK: gpu.shuffle  up
// CHECK: gpu.shuffle  down
// CHECK-LABEL: func.func private @__nabla_vjp_tree_ddd
// CHECK-COUNT-2: gpu.barrier
// The kernel adjoint: the tile and its shadow attribution, zeroed first.
// CHECK: gpu.func @tree_kernel_adjoint(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) workgroup(%[[TILE:.*]] : memref<64xf32, #gpu.address_space<workgroup>>, %[[DTILE:.*]] : memref<64xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: memref.store %{{.*}}, %[[DTILE]]
// CHECK: gpu.barrier
// CHECK: call @__nabla_vjp___nabla_kernel_tree_kernel_ddd
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // S = sum of X over the lane's group of 8 (xor 1, 2, 4); Y = S * X
    func.func @butterfly(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %size = gpu.subgroup_size : index
      %w = arith.index_cast %size : index to i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c4 = arith.constant 4 : i32
      %a, %va = gpu.shuffle xor %x, %c1, %w : f32
      %s1 = arith.addf %x, %a : f32
      %b, %vb = gpu.shuffle xor %s1, %c2, %w : f32
      %s2 = arith.addf %s1, %b : f32
      %c, %vc = gpu.shuffle xor %s2, %c4, %w : f32
      %s3 = arith.addf %s2, %c : f32
      %y = arith.mulf %s3, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X * next(X) + prev(X)^2, 0 where the neighbour does not exist
    func.func @neighbours(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %size = gpu.subgroup_size : index
      %w = arith.index_cast %size : index to i32
      %c1 = arith.constant 1 : i32
      %zero = arith.constant 0.0 : f32
      %n, %vn = gpu.shuffle down %x, %c1, %w : f32
      %p, %vp = gpu.shuffle up %x, %c1, %w : f32
      %next = arith.select %vn, %n, %zero : f32
      %prev = arith.select %vp, %p, %zero : f32
      %xn = arith.mulf %x, %next : f32
      %pp = arith.mulf %prev, %prev : f32
      %y = arith.addf %xn, %pp : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X * subgroup_sum(X)
    func.func @reduce(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %s = gpu.subgroup_reduce add %x : (f32) -> f32
      %y = arith.mulf %s, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X * subgroup_max(X): the max's derivative goes to the lowest lane
    // holding it.
    func.func @reducemax(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %m = gpu.subgroup_reduce maximumf %x : (f32) -> f32
      %y = arith.mulf %m, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Out[block] = (sum of the block's X)^2 by a tree in workgroup memory
    func.func @tree(%X: memref<?xf32>, %tile: memref<64xf32, #gpu.address_space<workgroup>>, %Out: memref<?xf32>) {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %blk = gpu.block_id x
      %x = memref.load %X[%i] : memref<?xf32>
      memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
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
          %sum = arith.addf %a, %b : f32
          memref.store %sum, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        %r2 = arith.mulf %r, %r : f32
        memref.store %r2, %Out[%blk] : memref<?xf32>
      }
      return
    }

    // A histogram with primal atomics: bins[k] += x * s with k = the bin of
    // x (an integer computation: inactive), so dx = s * dbins[k] and
    // ds = x * dbins[k] (summed over threads by the caller).
    func.func @histogram(%X: memref<?xf32>, %bins: memref<8xf32>, %s: f32) -> f32 {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %four = arith.constant 4.0 : f32
      %ax = math.absf %x : f32
      %scaled = arith.mulf %ax, %four : f32
      %bin = arith.fptoui %scaled : f32 to i32
      %c7 = arith.constant 7 : i32
      %clamped = arith.minui %bin, %c7 : i32
      %k = arith.index_cast %clamped : i32 to index
      %v = arith.mulf %x, %s : f32
      %old = memref.atomic_rmw addf %v, %bins[%k] : (f32, memref<8xf32>) -> f32
      return %s : f32
    }
    gpu.func @histogram_kernel(%X: memref<?xf32>, %bins: memref<8xf32>, %s: f32) kernel {
      %r = func.call @histogram(%X, %bins, %s) : (memref<?xf32>, memref<8xf32>, f32) -> f32
      gpu.return
    }
    gpu.func @histogram_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %bins: memref<8xf32>, %dbins: memref<8xf32>, %s: f32, %DS: memref<?xf32>) kernel {
      %zero = arith.constant 0.0 : f32
      %r, %ds = nabla.autodiff @histogram(%X, %dX, %bins, %dbins, %s, %zero)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<active>],
           ret_activity = [#nabla.activity<active>]}
          : (memref<?xf32>, memref<?xf32>, memref<8xf32>, memref<8xf32>, f32, f32) -> (f32, f32)
      %i = gpu.global_id x
      memref.store %ds, %DS[%i] : memref<?xf32>
      gpu.return
    }
    gpu.func @butterfly_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @butterfly(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @butterfly_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.autodiff @butterfly(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @butterfly_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @butterfly(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @neighbours_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @neighbours(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @neighbours_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.autodiff @neighbours(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @neighbours_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @neighbours(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @reduce_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.autodiff @reduce(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @reduce_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @reduce(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @reducemax_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.autodiff @reducemax(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @reducemax_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @reducemax(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @tree_kernel(%X: memref<?xf32>, %Out: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      func.call @tree(%X, %tile, %Out) : (memref<?xf32>, memref<64xf32, #gpu.address_space<workgroup>>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @tree_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Out: memref<?xf32>, %dOut: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>,
                  %dtile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      // The tile's final state is scratch: its cotangent is zero.
      %t = gpu.thread_id x
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %dtile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      nabla.autodiff @tree(%X, %dX, %tile, %dtile, %Out, %dOut)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<64xf32, #gpu.address_space<workgroup>>, memref<64xf32, #gpu.address_space<workgroup>>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    // Whole-kernel adjoints: generated wrappers equal to the hand-written ones
    // above (the tree's tile gets a zeroed shadow attribution).
    nabla.kernel_adjoint @tree_kernel -> @tree_kernel_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @butterfly_kernel -> @butterfly_kernel_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
  }
}
