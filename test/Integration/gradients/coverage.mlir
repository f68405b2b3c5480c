// The remaining rules, each run (f32): Y = sum_k c_k term_k(X, Z) with every
// math and arith rule not exercised elsewhere, reached through unstructured
// control flow (cf.cond_br, lifted to scf) and a subview of the input.
// Checked by test_gradients_elementwise.py against numpy's analytic derivatives in
// reverse and forward mode, and by the dot-product test.
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @terms(%X: memref<?xf32>, %Z: memref<?xf32>, %Y: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      cf.cond_br %in, ^compute, ^done
    ^compute:
      %c0 = arith.constant 0 : index
      %view = memref.subview %X[0] [%n] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
      %x = memref.load %view[%i] : memref<?xf32, strided<[1]>>
      %z = memref.load %Z[%i] : memref<?xf32>
      %t1 = math.tan %x : f32
      %t2 = math.exp2 %x : f32
      %t3 = math.expm1 %x : f32
      %t4 = math.log2 %x : f32
      %t5 = math.log10 %x : f32
      %t6 = math.rsqrt %x : f32
      %t7 = math.cbrt %x : f32
      %t8 = math.sinh %x : f32
      %t9 = math.cosh %x : f32
      %t10 = math.atan2 %x, %z : f32
      %c3 = arith.constant 3 : i32
      %t11 = math.fpowi %x, %c3 : f32, i32
      %t12 = math.copysign %x, %z : f32
      %t13 = arith.minimumf %x, %z : f32
      %t14 = arith.maxnumf %x, %z : f32
      %t15 = arith.minnumf %x, %z : f32
      %t16 = arith.negf %x : f32
      %four = arith.constant 4.0 : f32
      %x4 = arith.mulf %x, %four : f32
      %t17 = math.floor %x4 : f32
      %t18 = math.ceil %x4 : f32
      %t19 = math.round %x4 : f32
      %xd = arith.extf %x : f32 to f64
      %sq = arith.mulf %xd, %xd : f64
      %t20 = arith.truncf %sq : f64 to f32
      %terms = arith.constant 0.0 : f32
      %k1 = arith.constant 0.1 : f32
      %s1 = arith.mulf %t1, %k1 : f32
      %k2 = arith.constant 0.2 : f32
      %s2 = arith.mulf %t2, %k2 : f32
      %k3 = arith.constant 0.3 : f32
      %s3 = arith.mulf %t3, %k3 : f32
      %k4 = arith.constant 0.4 : f32
      %s4 = arith.mulf %t4, %k4 : f32
      %k5 = arith.constant 0.5 : f32
      %s5 = arith.mulf %t5, %k5 : f32
      %k6 = arith.constant 0.6 : f32
      %s6 = arith.mulf %t6, %k6 : f32
      %k7 = arith.constant 0.7 : f32
      %s7 = arith.mulf %t7, %k7 : f32
      %k8 = arith.constant 0.8 : f32
      %s8 = arith.mulf %t8, %k8 : f32
      %k9 = arith.constant 0.9 : f32
      %s9 = arith.mulf %t9, %k9 : f32
      %k10 = arith.constant 1.0 : f32
      %s10 = arith.mulf %t10, %k10 : f32
      %k11 = arith.constant 1.1 : f32
      %s11 = arith.mulf %t11, %k11 : f32
      %k12 = arith.constant 1.2 : f32
      %s12 = arith.mulf %t12, %k12 : f32
      %k13 = arith.constant 1.3 : f32
      %s13 = arith.mulf %t13, %k13 : f32
      %k14 = arith.constant 1.4 : f32
      %s14 = arith.mulf %t14, %k14 : f32
      %k15 = arith.constant 1.5 : f32
      %s15 = arith.mulf %t15, %k15 : f32
      %k16 = arith.constant 1.6 : f32
      %s16 = arith.mulf %t16, %k16 : f32
      %k17 = arith.constant 1.7 : f32
      %s17 = arith.mulf %t17, %k17 : f32
      %k18 = arith.constant 1.8 : f32
      %s18 = arith.mulf %t18, %k18 : f32
      %k19 = arith.constant 1.9 : f32
      %s19 = arith.mulf %t19, %k19 : f32
      %k20 = arith.constant 2.0 : f32
      %s20 = arith.mulf %t20, %k20 : f32
      %a1 = arith.addf %s1, %s2 : f32
      %a2 = arith.addf %a1, %s3 : f32
      %a3 = arith.addf %a2, %s4 : f32
      %a4 = arith.addf %a3, %s5 : f32
      %a5 = arith.addf %a4, %s6 : f32
      %a6 = arith.addf %a5, %s7 : f32
      %a7 = arith.addf %a6, %s8 : f32
      %a8 = arith.addf %a7, %s9 : f32
      %a9 = arith.addf %a8, %s10 : f32
      %a10 = arith.addf %a9, %s11 : f32
      %a11 = arith.addf %a10, %s12 : f32
      %a12 = arith.addf %a11, %s13 : f32
      %a13 = arith.addf %a12, %s14 : f32
      %a14 = arith.addf %a13, %s15 : f32
      %a15 = arith.addf %a14, %s16 : f32
      %a16 = arith.addf %a15, %s17 : f32
      %a17 = arith.addf %a16, %s18 : f32
      %a18 = arith.addf %a17, %s19 : f32
      %a19 = arith.addf %a18, %s20 : f32
      memref.store %a19, %Y[%i] : memref<?xf32>
      cf.br ^done
    ^done:
      return
    }
    gpu.func @terms_kernel(%X: memref<?xf32>, %Z: memref<?xf32>, %Y: memref<?xf32>, %n: index) kernel {
      func.call @terms(%X, %Z, %Y, %n) : (memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @terms_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Z: memref<?xf32>, %dZ: memref<?xf32>,
                         %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @terms(%X, %dX, %Z, %dZ, %Y, %dY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @terms_tangent(%X: memref<?xf32>, %dX: memref<?xf32>, %Z: memref<?xf32>, %dZ: memref<?xf32>,
                            %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index) kernel {
      nabla.fwddiff @terms(%X, %dX, %Z, %dZ, %Y, %dY, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
