// Gradient kernels (f64) through loops: a Horner evaluation with an iter_arg
// and an in-place update A[i] = A[i] * x + C[k] inside the loop, whose
// overwritten values the reverse sweep reads back from per-thread tapes.
// Checked by test_gradients_control_flow.py.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // P[i] = sum_k C[k] x^(K-1-k) (Horner), A[i] <- A[i] x^K + sum_k C[k] x^(K-1-k)
    func.func @horner(%X: memref<?xf64>, %C: memref<?xf64>, %A: memref<?xf64>, %P: memref<?xf64>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf64>
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c5 = arith.constant 5 : index
        %zero = arith.constant 0.0 : f64
        %p = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (f64) {
          %ck = memref.load %C[%k] : memref<?xf64>
          %m = arith.mulf %acc, %x : f64
          %s = arith.addf %m, %ck : f64
          %a = memref.load %A[%i] : memref<?xf64>
          %ax = arith.mulf %a, %x : f64
          %an = arith.addf %ax, %ck : f64
          memref.store %an, %A[%i] : memref<?xf64>
          scf.yield %s : f64
        }
        memref.store %p, %P[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @horner_kernel(%X: memref<?xf64>, %C: memref<?xf64>, %A: memref<?xf64>, %P: memref<?xf64>, %n: index) kernel {
      func.call @horner(%X, %C, %A, %P, %n) : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
    gpu.func @horner_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %C: memref<?xf64>, %dC: memref<?xf64>,
                          %A: memref<?xf64>, %dA: memref<?xf64>, %P: memref<?xf64>, %dP: memref<?xf64>, %n: index) kernel {
      nabla.autodiff @horner(%X, %dX, %C, %dC, %A, %dA, %P, %dP, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
    gpu.func @horner_tangent(%X: memref<?xf64>, %tX: memref<?xf64>, %C: memref<?xf64>, %tC: memref<?xf64>,
                             %A: memref<?xf64>, %tA: memref<?xf64>, %P: memref<?xf64>, %tP: memref<?xf64>, %n: index) kernel {
      nabla.fwddiff @horner(%X, %tX, %C, %tC, %A, %tA, %P, %tP, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
  }
}
