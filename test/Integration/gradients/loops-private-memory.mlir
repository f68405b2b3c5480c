// Private memory per thread of the loop gradients of loops.mlir on sm_90:
// each checkpointed loop holds 8 snapshots of its state (16 bytes each for
// one f64 iter_arg: the state and its position), a nest one set per level,
// a taped loop its static slots, a preaccumulated loop (dyn, inplace: scalar
// state, pure body) only its Jacobian, which stays in registers; never a
// dynamic allocation, never a spill.
// REQUIRES: ptxas
// RUN: nabla-compile %S/loops.mlir --target=nvvm --chip=sm_90 -o %t
// RUN: %ptxas -v -arch=sm_90 %t/kernels.ptx -o %t/kernels.cubin 2>&1 | FileCheck %s
// ptxas reports the entry functions last to first.

// CHECK-LABEL: Function properties for ring_adjoint
// CHECK-NEXT: 128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for stored_while_grad
// CHECK-NEXT: 192 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for hinted_grad
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for static_outer_grad
// CHECK-NEXT: 176 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for loop_if_loop_grad
// CHECK-NEXT: 256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for inplace_grad
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for nest3_grad
// CHECK-NEXT: 384 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for nest2_grad
// CHECK-NEXT: 256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-LABEL: Function properties for dyn_grad
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
