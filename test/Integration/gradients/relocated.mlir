// Gradient kernels (f64) of a function reading a relocated constant host
// table T (no contents in the IR), checked by test_gradients_relocated.py under abi v2
// (T is a table binding filled at launch) and v1 (T materialized at compile
// time) with identical results. The table is a constant record: inactive, no
// shadow. Also compiled for every f64-capable target.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @table : memref<4xf64> {key = "host.table", constant}
    // A[i] = A[i]^2 * T[i % 4] + A[i]
    func.func @f(%A: memref<?xf64>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c4 = arith.constant 4 : index
        %k = arith.remui %i, %c4 : index
        %t = reloc.get_global @table : memref<4xf64>
        %c = memref.load %t[%k] : memref<4xf64>
        %a = memref.load %A[%i] : memref<?xf64>
        %a2 = arith.mulf %a, %a : f64
        %p = arith.mulf %a2, %c : f64
        %r = arith.addf %p, %a : f64
        memref.store %r, %A[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @f_kernel(%A: memref<?xf64>, %n: index) kernel {
      func.call @f(%A, %n) : (memref<?xf64>, index) -> ()
      gpu.return
    }
    gpu.func @f_grad(%A: memref<?xf64>, %dA: memref<?xf64>, %n: index) kernel {
      nabla.autodiff @f(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
    gpu.func @f_tangent(%A: memref<?xf64>, %dA: memref<?xf64>, %n: index) kernel {
      nabla.fwddiff @f(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf64>, memref<?xf64>, index) -> ()
      gpu.return
    }
  }
}
