// The seed kernel, target-neutral: mul squares A[i] in place for every global
// thread id i < n; mul_kernel runs it; grad_mul_kernel runs its reverse-mode
// derivative, so that on exit dA[i] = 2 * A_initial[i] * dA_entry[i].
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @mul(%A: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %inbounds = arith.cmpi ult, %i, %n : index
      scf.if %inbounds {
        %a = memref.load %A[%i] : memref<?xf32>
        %sq = arith.mulf %a, %a : f32
        memref.store %sq, %A[%i] : memref<?xf32>
      }
      return
    }

    gpu.func @mul_kernel(%A: memref<?xf32>, %n: index) kernel {
      func.call @mul(%A, %n) : (memref<?xf32>, index) -> ()
      gpu.return
    }

    gpu.func @grad_mul_kernel(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @mul(%A, %dA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                        ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
