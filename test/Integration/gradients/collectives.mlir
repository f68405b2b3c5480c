// Reverse and forward mode through the collectives added for issue 6 (f32),
// checked by test_gradients.py on lavapipe: workgroup-wide gpu.all_reduce
// (add, maximumf with ties, mul), gpu.subgroup_reduce mul with zeros, and a
// many-to-one gather by gpu.shuffle idx (its adjoint scatters).
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
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
