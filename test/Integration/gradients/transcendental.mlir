// Gradient kernels (f32) through transcendental math: every rule of
// DerivativeRules.cpp that SPIR-V can run, checked by test_gradients_elementwise.py
// against numpy's analytic derivatives and by the dot-product test; @inverse
// (the inverse trigonometric and hyperbolic functions and erfc) also against
// float64 finite differences of the primal kernel.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Y[i] = sin(x) + cos(x) * exp(x) + log(2 + x) + tanh(x) + pow(2 + x, 1.5)
    //        + atan(x) + sqrt(2 + x) + erf(x) + max(x, 0.25) + log1p(x*x)
    func.func @h(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %two = arith.constant 2.0 : f32
        %p15 = arith.constant 1.5 : f32
        %q = arith.constant 0.25 : f32
        %x2 = arith.addf %x, %two : f32
        %a = math.sin %x : f32
        %b0 = math.cos %x : f32
        %b1 = math.exp %x : f32
        %b = arith.mulf %b0, %b1 : f32
        %c = math.log %x2 : f32
        %d = math.tanh %x : f32
        %e = math.powf %x2, %p15 : f32
        %f = math.atan %x : f32
        %g = math.sqrt %x2 : f32
        %h = math.erf %x : f32
        %k = arith.maximumf %x, %q : f32
        %xx = arith.mulf %x, %x : f32
        %l = math.log1p %xx : f32
        %s0 = arith.addf %a, %b : f32
        %s1 = arith.addf %s0, %c : f32
        %s2 = arith.addf %s1, %d : f32
        %s3 = arith.addf %s2, %e : f32
        %s4 = arith.addf %s3, %f : f32
        %s5 = arith.addf %s4, %g : f32
        %s6 = arith.addf %s5, %h : f32
        %s7 = arith.addf %s6, %k : f32
        %s8 = arith.addf %s7, %l : f32
        memref.store %s8, %Y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @h_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @h(%X, %dX, %Y, %dY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @h_tangent(%X: memref<?xf32>, %tX: memref<?xf32>, %Y: memref<?xf32>, %tY: memref<?xf32>, %n: index) kernel {
      nabla.fwddiff @h(%X, %tX, %Y, %tY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    // Y[i] = asin(x) + acos(x) / 2 + asinh(2x) + acosh(2 + x) + atanh(x)
    //        + erfc(x) + erfc(4 + 4x), each op inside its domain for
    //        x in (-1, 1); the last term reaches erfc's tail (up to x = 8).
    func.func @inverse(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %half = arith.constant 0.5 : f32
        %two = arith.constant 2.0 : f32
        %four = arith.constant 4.0 : f32
        %a = math.asin %x : f32
        %b0 = math.acos %x : f32
        %b = arith.mulf %b0, %half : f32
        %x2 = arith.mulf %x, %two : f32
        %c = math.asinh %x2 : f32
        %xp2 = arith.addf %x, %two : f32
        %d = math.acosh %xp2 : f32
        %e = math.atanh %x : f32
        %f = math.erfc %x : f32
        %x4 = arith.mulf %x, %four : f32
        %t = arith.addf %x4, %four : f32
        %g = math.erfc %t : f32
        %s0 = arith.addf %a, %b : f32
        %s1 = arith.addf %s0, %c : f32
        %s2 = arith.addf %s1, %d : f32
        %s3 = arith.addf %s2, %e : f32
        %s4 = arith.addf %s3, %f : f32
        %s5 = arith.addf %s4, %g : f32
        memref.store %s5, %Y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @inverse_kernel(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) kernel {
      func.call @inverse(%X, %Y, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @inverse_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @inverse(%X, %dX, %Y, %dY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @inverse_tangent(%X: memref<?xf32>, %tX: memref<?xf32>, %Y: memref<?xf32>, %tY: memref<?xf32>, %n: index) kernel {
      nabla.fwddiff @inverse(%X, %tX, %Y, %tY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
