// Reverse and forward mode through the collectives added for issue 6 (f32),
// checked by test_gradients_{workgroup,subgroup,accumulation}.py on lavapipe: workgroup-wide gpu.all_reduce
// (add, maximumf with ties, mul), gpu.subgroup_reduce mul with zeros, a
// many-to-one gather by gpu.shuffle idx (its adjoint scatters), and primal
// float max/min atomics on workgroup memory (the adjoint goes to the thread
// whose atomic stored the final value).
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64 emulate-float-atomics=true})" -o %t.metal.mlir
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
// Forward mode writes the winner's tangent after the barrier, then
// barriers again before the tangent is read.
// CHECK-LABEL: func.func private @__nabla_jvp_atomicmax_ddd
// CHECK: memref.atomic_rmw maximumf
// CHECK-NEXT: gpu.barrier
// CHECK: arith.cmpf olt
// CHECK: scf.if
// CHECK-NEXT: memref.store
// CHECK: gpu.barrier
// Accumulation by global id x is plain only in a 1-D launch.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_rows2d_kernel_dd
// CHECK: gpu.block_dim  y
// CHECK: gpu.grid_dim  z
// CHECK: scf.if
// CHECK: memref.store
// CHECK: } else {
// CHECK-NEXT: memref.atomic_rmw addf
// The adjoint of a workgroup sum is a workgroup sum of the cotangents.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_allsum_kernel_dd
// CHECK: gpu.all_reduce add
// CHECK: gpu.all_reduce add
// The max's winner is the lowest linear thread id holding it.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_allmax_kernel_dd
// CHECK: gpu.all_reduce maximumf
// CHECK: gpu.all_reduce minui
// The gather's adjoint visits every lane's source in turn.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_gather_kernel_dd
// CHECK: scf.for
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Y = X * (sum of the workgroup's X)
    func.func @allsum(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
      %y = arith.mulf %s, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X * (max of the workgroup's X)
    func.func @allmax(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %m = gpu.all_reduce maximumf %x uniform {} : (f32) -> f32
      %y = arith.mulf %m, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X + (product of the workgroup's X)
    func.func @allprod(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %p = gpu.all_reduce mul %x {} : (f32) -> f32
      %y = arith.addf %p, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X * (product of the subgroup's X)
    func.func @subprod(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %p = gpu.subgroup_reduce mul %x : (f32) -> f32
      %y = arith.mulf %p, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X * X[lane / 2 of the same subgroup]: lanes of the lower half are
    // read twice, those of the upper half never.
    func.func @gather(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %size = gpu.subgroup_size : index
      %w = arith.index_cast %size : index to i32
      %lane = gpu.lane_id
      %l = arith.index_cast %lane : index to i32
      %c1 = arith.constant 1 : i32
      %src = arith.shrui %l, %c1 : i32
      %g, %valid = gpu.shuffle idx %x, %src, %w : f32
      %y = arith.mulf %g, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y = X * (max of the workgroup's X), the max by a workgroup atomic.
    func.func @atomicmax(%X: memref<?xf32>, %m: memref<1xf32, #gpu.address_space<workgroup>>, %Y: memref<?xf32>) {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %x = memref.load %X[%i] : memref<?xf32>
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %ninf = arith.constant 0xFF800000 : f32
        memref.store %ninf, %m[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %old = memref.atomic_rmw maximumf %x, %m[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
      gpu.barrier
      %mx = memref.load %m[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      %y = arith.mulf %mx, %x : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    // Y[i] = (X[2i] + X[2i+1]) * (min of the workgroup's X), two atomic
    // minima per thread from a loop (old values taped per iteration).
    func.func @atomicmin(%X: memref<?xf32>, %m: memref<1xf32, #gpu.address_space<workgroup>>, %Y: memref<?xf32>) {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %inf = arith.constant 0x7F800000 : f32
        memref.store %inf, %m[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %base = arith.muli %i, %c2 : index
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
        %j = arith.addi %base, %k : index
        %x = memref.load %X[%j] : memref<?xf32>
        %old = memref.atomic_rmw minnumf %x, %m[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
        %next = arith.addf %acc, %x : f32
        scf.yield %next : f32
      }
      gpu.barrier
      %mn = memref.load %m[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      %y = arith.mulf %mn, %sum : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      return
    }
    gpu.func @atomicmax_kernel(%X: memref<?xf32>, %Y: memref<?xf32>)
        workgroup(%m: memref<1xf32, #gpu.address_space<workgroup>>) kernel {
      func.call @atomicmax(%X, %m, %Y) : (memref<?xf32>, memref<1xf32, #gpu.address_space<workgroup>>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @atomicmin_kernel(%X: memref<?xf32>, %Y: memref<?xf32>)
        workgroup(%m: memref<1xf32, #gpu.address_space<workgroup>>) kernel {
      func.call @atomicmin(%X, %m, %Y) : (memref<?xf32>, memref<1xf32, #gpu.address_space<workgroup>>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @atomicmax_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>)
        workgroup(%m: memref<1xf32, #gpu.address_space<workgroup>>,
                  %dm: memref<1xf32, #gpu.address_space<workgroup>>) kernel {
      nabla.fwddiff @atomicmax(%X, %dX, %m, %dm, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    nabla.kernel_adjoint @atomicmax_kernel -> @atomicmax_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @atomicmin_kernel -> @atomicmin_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    // Y[2i + y] = X[i]^2 with i = gpu.global_id x on a 2-D block: two
    // threads read each X[i], so the adjoint's accumulation by global id x
    // (plain in 1-D launches) must fall back to an atomic here.
    func.func @rows2d(%X: memref<?xf32>, %Y: memref<?xf32>) {
      %i = gpu.global_id x
      %j = gpu.thread_id y
      %x = memref.load %X[%i] : memref<?xf32>
      %c2 = arith.constant 2 : index
      %k0 = arith.muli %i, %c2 : index
      %k = arith.addi %k0, %j : index
      %y = arith.mulf %x, %x : f32
      memref.store %y, %Y[%k] : memref<?xf32>
      return
    }
    gpu.func @rows2d_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @rows2d(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    nabla.kernel_adjoint @rows2d_kernel -> @rows2d_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    gpu.func @allsum_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @allsum(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @allmax_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @allmax(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @allprod_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @allprod(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @subprod_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @subprod(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @gather_kernel(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
      func.call @gather(%X, %Y) : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    nabla.kernel_adjoint @allsum_kernel -> @allsum_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @allmax_kernel -> @allmax_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @allprod_kernel -> @allprod_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @subprod_kernel -> @subprod_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    nabla.kernel_adjoint @gather_kernel -> @gather_grad
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    gpu.func @allsum_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @allsum(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @allmax_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @allmax(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @allprod_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @allprod(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @subprod_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @subprod(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
    gpu.func @gather_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>) kernel {
      nabla.fwddiff @gather(%X, %dX, %Y, %dY)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
  }
}
