// Gradient kernels (f64), checked numerically by test_gradients_elementwise.py: branches
// with results, math rules, an active scalar, a dup input and a dup output,
// reverse and forward mode. Also compiled for every f64-capable target.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Y[i] = X[i] > 0 ? X[i]^2 * sqrt(s) : X[i] / s - |X[i]| * s
    // (f64 ops every target lowers: GLSL.std.450 has no f64 transcendentals)
    func.func @f(%X: memref<?xf64>, %Y: memref<?xf64>, %s: f64, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf64>
        %zero = arith.constant 0.0 : f64
        %pos = arith.cmpf ogt, %x, %zero : f64
        %y = scf.if %pos -> (f64) {
          %x2 = arith.mulf %x, %x : f64
          %r = math.sqrt %s : f64
          %p = arith.mulf %x2, %r : f64
          scf.yield %p : f64
        } else {
          %q = arith.divf %x, %s : f64
          %a = math.absf %x : f64
          %as = arith.mulf %a, %s : f64
          %t = arith.subf %q, %as : f64
          scf.yield %t : f64
        }
        memref.store %y, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @f_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %s: f64, %n: index) kernel {
      func.call @f(%X, %Y, %s, %n) : (memref<?xf64>, memref<?xf64>, f64, index) -> ()
      gpu.return
    }
    // Reverse mode; each thread's gradient of s goes to DS[i].
    gpu.func @f_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>,
                     %s: f64, %DS: memref<?xf64>, %n: index) kernel {
      %ds = nabla.autodiff @f(%X, %dX, %Y, %dY, %s, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<active>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, index) -> f64
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        memref.store %ds, %DS[%i] : memref<?xf64>
      }
      gpu.return
    }
    // Forward mode with a tangent for s.
    gpu.func @f_tangent(%X: memref<?xf64>, %tX: memref<?xf64>, %Y: memref<?xf64>, %tY: memref<?xf64>,
                        %s: f64, %ts: f64, %n: index) kernel {
      nabla.fwddiff @f(%X, %tX, %Y, %tY, %s, %ts, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64, index) -> ()
      gpu.return
    }
  }
}
