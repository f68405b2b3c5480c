//===- NablaBase.td - The nabla dialect definition ------------*- tablegen -*-===//
//
// The `nabla` dialect holds Nabla's automatic-differentiation ops: reverse mode
// (`nabla.autodiff`) and forward mode (`nabla.fwddiff`) of device functions,
// callable from inside GPU kernels, with Enzyme-style activities.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLABASE_TD
#define NABLA_DIALECT_NABLA_IR_NABLABASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Nabla_Dialect : Dialect {
  let name = "nabla";
  let cppNamespace = "::nabla";
  let summary = "Automatic differentiation of GPU device functions.";
  let description = [{
    The `nabla` dialect requests derivatives of function-like symbols. A
    `nabla.autodiff` op computes a vector-Jacobian product (reverse mode) and a
    `nabla.fwddiff` op a Jacobian-vector product (forward mode) of its callee.
    Both are usable inside `gpu.func` kernels: each thread differentiates its own
    call, with Enzyme's memory semantics for duplicated (`dup`) buffers.

    Every argument and result of the callee carries an activity
    (`#nabla.activity<...>`) that fixes which operands the op takes (primal,
    shadow, seed) and which results it returns (primal, gradient, tangent).
    The `--nabla-differentiate` pass expands the ops into generated derivative
    functions.

    ```mlir
    func.func @mul(%A: memref<?xf32>, %n: index) { ... }
    gpu.func @grad_mul_kernel(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @mul(%A, %dA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                        ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    ```

    Reverse-mode hints on loops (discardable attributes, verified here):
    `nabla.max_trip_count = N` on an `scf.for` bounds its trip count, so the
    loop is reversed with a per-thread tape of N slots (checked when the
    kernel runs: more iterations turn the loop's adjoints into NaN);
    `nabla.checkpoints = K` on an `scf.for` or `scf.while` sets the snapshots
    of a checkpointed loop.

    ```mlir
    %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %x) -> (f32) {
      ...
    } {nabla.max_trip_count = 64 : i64}
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
}

#endif // NABLA_DIALECT_NABLA_IR_NABLABASE_TD
