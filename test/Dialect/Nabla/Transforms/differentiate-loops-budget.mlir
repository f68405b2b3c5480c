// The cost model: a loop with constant bounds is taped while its tape fits
// tape-budget bytes per thread, checkpointed beyond (here 5 slots of one f32
// iter_arg: 20 bytes).
// RUN: nabla-opt %s --nabla-differentiate | FileCheck %s --check-prefix=TAPE
// RUN: nabla-opt %s --nabla-differentiate=tape-budget=19 | FileCheck %s --check-prefix=CHECKPOINT
// RUN: not nabla-opt %s --nabla-differentiate=checkpoints=0 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: checkpoints must be at least 1

// TAPE-LABEL: func.func private @__nabla_vjp_constant_a_a
// TAPE-NOT: scf.while
// TAPE: return
// CHECKPOINT-LABEL: func.func private @__nabla_vjp_constant_a_a
// CHECKPOINT: scf.while
func.func @constant(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %r = scf.for %k = %c0 to %c5 step %c1 iter_args(%a = %x) -> (f32) {
    %s = math.sin %a : f32
    scf.yield %s : f32
  }
  return %r : f32
}
func.func @g(%x: f32, %s: f32) -> f32 {
  %d:2 = nabla.autodiff @constant(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]} : (f32, f32) -> (f32, f32)
  return %d#1 : f32
}
