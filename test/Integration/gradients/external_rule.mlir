// A frontend's own op (nabla_test.cube, from the test dialect linked into
// nabla-test-opt) differentiated through the derivative rule the frontend attached
// as an external model of DifferentiableOpInterface; Nabla has no rule of its
// own for it. test_gradients_frontend_ops.py differentiates, lowers the test op and runs
// the gradient on lavapipe against 3x² and finite differences.
// RUN: nabla-test-opt %s --nabla-differentiate | FileCheck %s
// RUN: nabla-test-opt %s --nabla-differentiate --nabla-test-lower -o %t.mlir
// RUN: nabla-compile %t.mlir --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// The forward sweep runs the op; the reverse sweep has the model's 3x², from
// the x the forward scf.if cached.
// CHECK-LABEL: func.func private @__nabla_vjp_f_dc
// CHECK: %[[FWD:.*]]:3 = scf.if
// CHECK: %[[X:.*]] = memref.load
// CHECK: nabla_test.cube %[[X]] : f32
// CHECK: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[X2:.*]] = arith.mulf %[[FWD]]#0, %[[FWD]]#0 : f32
// CHECK: arith.mulf %[[THREE]], %[[X2]] : f32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // A[i] = cube(A[i]) + A[i]
    func.func @f(%A: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %A[%i] : memref<?xf32>
        %c = nabla_test.cube %x : f32
        %y = arith.addf %c, %x : f32
        memref.store %y, %A[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @f_kernel(%A: memref<?xf32>, %n: index) kernel {
      func.call @f(%A, %n) : (memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @f_grad(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @f(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @f_tangent(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      nabla.fwddiff @f(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
