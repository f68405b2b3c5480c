// nabla-module-to-binary on ROCDL: upstream's serializer runs none of
// gpu::TargetOptions' LLVM IR callbacks, so Nabla serializes ROCDL modules
// through a subclass that does. A device-library function (alwaysinline, as
// OCML's are) called from more than outline-calls places stays out of line;
// a value across more than call-crossing calls goes to the stack frame
// (scratch); runs of call-chunk calls between a block's first and last
// become functions of their own (k.calls...). With the defaults, this
// kernel's 7 calls are inlined and nothing else happens.
// RUN: nabla-opt %s --nabla-module-to-binary="format=isa outline-calls=4 call-crossing=2 call-chunk=2" | FileCheck %s
// RUN: nabla-opt %s --nabla-module-to-binary="format=isa" | FileCheck %s --check-prefix=DEFAULT
// CHECK: gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx90a">
// CHECK-SAME: __ocml_sin_f32:
// CHECK-SAME: k.calls:
// CHECK-SAME: s_swappc_b64
// CHECK-SAME: k:
// CHECK-SAME: buffer_store_dword
// CHECK-SAME: s_swappc_b64
// DEFAULT: gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx90a">
// DEFAULT-NOT: s_swappc_b64
// DEFAULT-NOT: k.calls
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx90a">] {
    llvm.func @__ocml_sin_f32(%a: f32) -> f32 attributes {passthrough = ["alwaysinline"]} {
      %c = llvm.mlir.constant(1.5 : f32) : f32
      %r = llvm.fmul %a, %c : f32
      %s = llvm.fadd %r, %c : f32
      llvm.return %s : f32
    }
    llvm.func @k(%p: !llvm.ptr<1>) attributes {rocdl.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      %c1 = llvm.call @__ocml_sin_f32(%x) : (f32) -> f32
      %c2 = llvm.call @__ocml_sin_f32(%c1) : (f32) -> f32
      %c3 = llvm.call @__ocml_sin_f32(%c2) : (f32) -> f32
      %c4 = llvm.call @__ocml_sin_f32(%c3) : (f32) -> f32
      %c5 = llvm.call @__ocml_sin_f32(%c4) : (f32) -> f32
      %c6 = llvm.call @__ocml_sin_f32(%c5) : (f32) -> f32
      %c7 = llvm.call @__ocml_sin_f32(%c6) : (f32) -> f32
      %s = llvm.fadd %x, %c7 : f32
      llvm.store %s, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
