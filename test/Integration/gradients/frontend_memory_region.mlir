// A frontend's own memory op (nabla_test.scaled_load: m[i] * s) inside its
// own region op (nabla_test.once), both differentiated through the
// ForwardModeOpInterface / ReverseModeOpInterface models the frontend
// attached (examples/frontend-dialect/TestDerivatives.cpp); Nabla has no rule
// of its own for either. test_gradients_frontend_ops.py differentiates, lowers the test
// ops and runs both modes on lavapipe against the closed forms and finite
// differences.
// RUN: nabla-test-opt %s --nabla-differentiate | FileCheck %s
// RUN: nabla-test-opt %s --nabla-differentiate --nabla-test-lower -o %t.mlir
// RUN: nabla-compile %t.mlir --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// Forward mode keeps the region, with the tangent code inside it.
// CHECK-LABEL: func.func private @__nabla_jvp_g_dddc
// CHECK: nabla_test.once {
// CHECK: nabla_test.scaled_load
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: }
// Reverse mode: the forward sweep runs the body inline (the enclosing scf.if
// caches its values); the reverse sweep accumulates dr * s into A's shadow
// (an atomic: another dialect's reads are not analysed) and dr * A[i] into
// s's adjoint, which the load of S[0] adds to S's shadow.
// CHECK-LABEL: func.func private @__nabla_vjp_g_dddc
// CHECK-NOT: nabla_test.once
// CHECK: nabla_test.scaled_load
// CHECK: memref.atomic_rmw addf %{{.*}}, %arg1[%global_id_x]
// CHECK: memref.atomic_rmw addf %{{.*}}, %arg3[
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // B[i] = (A[i] * S[0])^2
    func.func @g(%A: memref<?xf32>, %S: memref<1xf32>, %B: memref<?xf32>,
                 %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        nabla_test.once {
          %c0 = arith.constant 0 : index
          %s = memref.load %S[%c0] : memref<1xf32>
          %x = nabla_test.scaled_load %A[%i], %s : memref<?xf32> -> f32
          %y = arith.mulf %x, %x : f32
          memref.store %y, %B[%i] : memref<?xf32>
        }
      }
      return
    }
    gpu.func @g_kernel(%A: memref<?xf32>, %S: memref<1xf32>,
                       %B: memref<?xf32>, %n: index) kernel {
      func.call @g(%A, %S, %B, %n)
          : (memref<?xf32>, memref<1xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @g_grad(%A: memref<?xf32>, %dA: memref<?xf32>,
                     %S: memref<1xf32>, %dS: memref<1xf32>,
                     %B: memref<?xf32>, %dB: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @g(%A, %dA, %S, %dS, %B, %dB, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>,
                       #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>,
             memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @g_tangent(%A: memref<?xf32>, %dA: memref<?xf32>,
                        %S: memref<1xf32>, %dS: memref<1xf32>,
                        %B: memref<?xf32>, %dB: memref<?xf32>, %n: index) kernel {
      nabla.fwddiff @g(%A, %dA, %S, %dS, %B, %dB, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>,
                       #nabla.activity<dup>, #nabla.activity<const>],
           ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>,
             memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
