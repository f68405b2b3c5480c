// nabla-module-to-binary's hooks on the optimized LLVM IR, on the NVVM path:
// a value living across more than call-crossing calls is stored to the stack
// frame after its definition and loaded back before its use (ptxas's time
// grows with what lives across calls); a block making more than twice
// call-chunk calls keeps its first and last runs and calls the runs between
// as functions of their own (ptxas's time grows with the square of one
// function's calls). The kernel stays an entry, its pieces are plain .func.
// With the defaults (16, 128), this small kernel is left alone.
// RUN: nabla-opt %s --nabla-module-to-binary="format=isa call-crossing=2 call-chunk=2" | FileCheck %s
// RUN: nabla-opt %s --nabla-module-to-binary="format=isa" | FileCheck %s --check-prefix=DEFAULT
// CHECK: .func k_$_calls\0A
// CHECK: .visible .entry k(
// CHECK: ld.global.b32 \09[[X:%r[0-9]+]],
// CHECK: st.local.b32 \09[{{%rd[0-9]+}}], [[X]];
// CHECK: call.uni (retval0), g,
// CHECK: call.uni (retval0), g,
// CHECK: call.uni k_$_calls,
// CHECK: ld.local.b32 \09%r
// CHECK: call.uni k_$_calls1,
// CHECK: .func k_$_calls(
// CHECK-COUNT-2: call.uni (retval0), g,
// CHECK-NOT: .entry
// DEFAULT-NOT: k_$_calls
// DEFAULT-NOT: st.local
// DEFAULT-COUNT-7: call.uni (retval0), g,
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_80">] {
    llvm.func @g(%a: f32) -> f32 attributes {passthrough = ["noinline"]} {
      %c = llvm.mlir.constant(1.5 : f32) : f32
      %r = llvm.fmul %a, %c : f32
      llvm.return %r : f32
    }
    llvm.func @k(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      %c1 = llvm.call @g(%x) : (f32) -> f32
      %c2 = llvm.call @g(%c1) : (f32) -> f32
      %c3 = llvm.call @g(%c2) : (f32) -> f32
      %c4 = llvm.call @g(%c3) : (f32) -> f32
      %c5 = llvm.call @g(%c4) : (f32) -> f32
      %c6 = llvm.call @g(%c5) : (f32) -> f32
      %c7 = llvm.call @g(%c6) : (f32) -> f32
      %s = llvm.fadd %x, %c7 : f32
      llvm.store %s, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
