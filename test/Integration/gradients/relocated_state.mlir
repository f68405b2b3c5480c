// Gradient kernels (f64) of a function storing differentiated data into a
// writable relocated object: the record gets a paired shadow record
// ("Main.state#shadow", shadow_of = @state) that the loader provides like the
// shadow of a dup buffer (abi v2 only: v1 cannot hold writable objects).
// Checked by test_gradients_relocated.py; also compiled for every f64-capable target.
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// CHECK: reloc.global @state_shadow : memref<128xf64> {key = "Main.state#shadow", shadow_of = @state}
// CHECK-LABEL: func.func private @__nabla_vjp_g_dc
// CHECK: reloc.get_global @state_shadow
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @table : memref<4xf64> {key = "host.table", constant}
    reloc.global @state : memref<128xf64> {key = "Main.state"}
    // state[i] = A[i]^2 * T[i % 4]
    func.func @g(%A: memref<?xf64>, %n: index) {
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
        %s = reloc.get_global @state : memref<128xf64>
        memref.store %p, %s[%i] : memref<128xf64>
      }
      return
    }
    gpu.func @g_kernel(%A: memref<?xf64>, %n: index) kernel {
      func.call @g(%A, %n) : (memref<?xf64>, index) -> ()
      gpu.return
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
  }
}
