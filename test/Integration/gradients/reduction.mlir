// Gradient kernels (f64): a primal float atomic (a sum over threads), a
// non-exclusive read (C[i mod 4], shared by many threads: its adjoint needs an
// atomic) and an exclusive one (X[i]), checked by test_gradients_accumulation.py.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-opt %s --nabla-differentiate=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: reduction.mlir:[[@LINE+12]]:{{[0-9]+}}: remark: adjoint accumulation keeps an atomic: the index is not proven to be an injective function of the global thread id
// REMARK-NOT: remark
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Out[0] += sum_i fma(X[i], C[i mod 4], X[i]^2)
    func.func @g(%X: memref<?xf64>, %C: memref<?xf64>, %Out: memref<?xf64>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c4 = arith.constant 4 : index
        %k = arith.remui %i, %c4 : index
        %x = memref.load %X[%i] : memref<?xf64>
        %c = memref.load %C[%k] : memref<?xf64>
        %x2 = arith.mulf %x, %x : f64
        %v = math.fma %x, %c, %x2 : f64
        %c0 = arith.constant 0 : index
        %old = memref.atomic_rmw addf %v, %Out[%c0] : (f64, memref<?xf64>) -> f64
      }
      return
    }
    gpu.func @g_kernel(%X: memref<?xf64>, %C: memref<?xf64>, %Out: memref<?xf64>, %n: index) kernel {
      func.call @g(%X, %C, %Out, %n) : (memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
    gpu.func @g_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %C: memref<?xf64>, %dC: memref<?xf64>,
                     %Out: memref<?xf64>, %dOut: memref<?xf64>, %n: index) kernel {
      nabla.autodiff @g(%X, %dX, %C, %dC, %Out, %dOut, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
    gpu.func @g_tangent(%X: memref<?xf64>, %tX: memref<?xf64>, %C: memref<?xf64>, %tC: memref<?xf64>,
                        %Out: memref<?xf64>, %tOut: memref<?xf64>, %n: index) kernel {
      nabla.fwddiff @g(%X, %tX, %C, %tC, %Out, %tOut, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
  }
}
