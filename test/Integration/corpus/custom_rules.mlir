// Corpus: custom derivative rules inside a gpu.module, used by a kernel's
// gradient and tangent. @ste is a straight-through estimator: floor has
// derivative 0 almost everywhere, its rules pass the seed (tangent) through,
// so the numbers tell which was used. Every pipeline compiles it (the
// registrations used to be rejected as "requests not expanded").
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @ste(%x: f32) -> f32 {
      %y = math.floor %x : f32
      return %y : f32
    }
    func.func @ste_vjp(%x: f32, %seed: f32) -> (f32, f32) {
      %y = math.floor %x : f32
      return %y, %seed : f32, f32
    }
    func.func @ste_jvp(%x: f32, %dx: f32) -> (f32, f32) {
      %y = math.floor %x : f32
      return %y, %dx : f32, f32
    }
    nabla.custom_derivative @ste reverse @ste_vjp {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}
    nabla.custom_derivative @ste forward @ste_jvp {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dup>]}

    // Y[i] = ste(2 X[i]) * X[i]
    func.func @model(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %two = arith.constant 2.0 : f32
        %x2 = arith.mulf %x, %two : f32
        %q = func.call @ste(%x2) : (f32) -> f32
        %y = arith.mulf %q, %x : f32
        memref.store %y, %Y[%i] : memref<?xf32>
      }
      return
    }

    gpu.func @grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>,
                   %dY: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @model(%X, %dX, %Y, %dY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    gpu.func @tangent(%X: memref<?xf32>, %tX: memref<?xf32>, %Y: memref<?xf32>,
                      %tY: memref<?xf32>, %n: index) kernel {
      nabla.fwddiff @model(%X, %tX, %Y, %tY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
