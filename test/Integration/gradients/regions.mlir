// Gradient kernels (f64) with a data-dependent scf.if inside an scf.for that
// overwrites A[i] in place each iteration and carries a value, and an
// scf.execute_region; @g keeps differentiated data in a private
// memref.alloca scratch buffer (it gets a zero-initialised shadow
// allocation); @h has a data-dependent scf.while (reverse mode recomputes
// its iterations from the initial values); checked numerically by test_gradients_control_flow.py (finite
// differences, dot-product test). Also compiled for every f64-capable target.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // for k in 0..4: a = A[i]; v = a > C[k] ? a*C[k] : a - C[k]^2;
    //                A[i] = 0.5 a + 0.1 v; acc += v
    // A[i] += acc^2 (in an execute_region)
    func.func @f(%A: memref<?xf64>, %C: memref<4xf64>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %zero = arith.constant 0.0 : f64
        %half = arith.constant 0.5 : f64
        %tenth = arith.constant 0.1 : f64
        %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (f64) {
          %a = memref.load %A[%i] : memref<?xf64>
          %c = memref.load %C[%k] : memref<4xf64>
          %big = arith.cmpf ogt, %a, %c : f64
          %v = scf.if %big -> (f64) {
            %p = arith.mulf %a, %c : f64
            scf.yield %p : f64
          } else {
            %c2 = arith.mulf %c, %c : f64
            %q = arith.subf %a, %c2 : f64
            scf.yield %q : f64
          }
          %ha = arith.mulf %a, %half : f64
          %tv = arith.mulf %v, %tenth : f64
          %new = arith.addf %ha, %tv : f64
          memref.store %new, %A[%i] : memref<?xf64>
          %s2 = arith.addf %s, %v : f64
          scf.yield %s2 : f64
        }
        %r = scf.execute_region -> f64 {
          %sq = arith.mulf %acc, %acc : f64
          scf.yield %sq : f64
        }
        %last = memref.load %A[%i] : memref<?xf64>
        %out = arith.addf %last, %r : f64
        memref.store %out, %A[%i] : memref<?xf64>
      }
      return
    }
    // buf[k] = A[i] * (k + 1) for k < 3; A[i] = buf[0] * buf[1] + buf[2]^2
    func.func @g(%A: memref<?xf64>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c3 = arith.constant 3 : index
        %buf = memref.alloca() : memref<3xf64>
        %a = memref.load %A[%i] : memref<?xf64>
        scf.for %k = %c0 to %c3 step %c1 {
          %k1 = arith.addi %k, %c1 : index
          %k1i = arith.index_cast %k1 : index to i64
          %kf = arith.sitofp %k1i : i64 to f64
          %v = arith.mulf %a, %kf : f64
          memref.store %v, %buf[%k] : memref<3xf64>
        }
        %b0 = memref.load %buf[%c0] : memref<3xf64>
        %b1 = memref.load %buf[%c1] : memref<3xf64>
        %b2 = memref.load %buf[%c2] : memref<3xf64>
        %p = arith.mulf %b0, %b1 : f64
        %q = arith.mulf %b2, %b2 : f64
        %r = arith.addf %p, %q : f64
        memref.store %r, %A[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @g_grad(%A: memref<?xf64>, %dA: memref<?xf64>, %n: index) kernel {
      nabla.autodiff @g(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
    gpu.func @g_tangent(%A: memref<?xf64>, %dA: memref<?xf64>, %n: index) kernel {
      nabla.fwddiff @g(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
    // x = A[i]; while (x < 10 and k < 20) { x = 1.5 x + s; k++ }; A[i] = x
    func.func @h(%A: memref<?xf64>, %s: f64, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x0 = memref.load %A[%i] : memref<?xf64>
        %c0 = arith.constant 0 : index
        %r:2 = scf.while (%x = %x0, %k = %c0) : (f64, index) -> (f64, index) {
          %ten = arith.constant 10.0 : f64
          %c20 = arith.constant 20 : index
          %small = arith.cmpf olt, %x, %ten : f64
          %few = arith.cmpi ult, %k, %c20 : index
          %go = arith.andi %small, %few : i1
          scf.condition(%go) %x, %k : f64, index
        } do {
        ^bb0(%y: f64, %j: index):
          %f = arith.constant 1.5 : f64
          %c1 = arith.constant 1 : index
          %y1 = arith.mulf %y, %f : f64
          %y2 = arith.addf %y1, %s : f64
          %j1 = arith.addi %j, %c1 : index
          scf.yield %y2, %j1 : f64, index
        }
        memref.store %r#0, %A[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @h_kernel(%A: memref<?xf64>, %s: f64, %n: index) kernel {
      func.call @h(%A, %s, %n) : (memref<?xf64>, f64, index) -> ()
      gpu.return
    }
    gpu.func @h_grad(%A: memref<?xf64>, %dA: memref<?xf64>, %s: f64, %DS: memref<?xf64>, %n: index) kernel {
      %ds = nabla.autodiff @h(%A, %dA, %s, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<active>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, f64, index) -> f64
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        memref.store %ds, %DS[%i] : memref<?xf64>
      }
      gpu.return
    }
    gpu.func @h_tangent(%A: memref<?xf64>, %dA: memref<?xf64>, %s: f64, %ds: f64, %n: index) kernel {
      nabla.fwddiff @h(%A, %dA, %s, %ds, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, f64, f64, index) -> ()
      gpu.return
    }
    gpu.func @f_kernel(%A: memref<?xf64>, %C: memref<4xf64>, %n: index) kernel {
      func.call @f(%A, %C, %n) : (memref<?xf64>, memref<4xf64>, index) -> ()
      gpu.return
    }
    gpu.func @f_grad(%A: memref<?xf64>, %dA: memref<?xf64>, %C: memref<4xf64>, %dC: memref<4xf64>, %n: index) kernel {
      nabla.autodiff @f(%A, %dA, %C, %dC, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, memref<4xf64>, memref<4xf64>, index) -> ()
      gpu.return
    }
    gpu.func @f_tangent(%A: memref<?xf64>, %dA: memref<?xf64>, %C: memref<4xf64>, %dC: memref<4xf64>, %n: index) kernel {
      nabla.fwddiff @f(%A, %dA, %C, %dC, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, memref<4xf64>, memref<4xf64>, index) -> ()
      gpu.return
    }
  }
}
