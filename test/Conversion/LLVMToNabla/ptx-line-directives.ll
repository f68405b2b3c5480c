; A .ll without debug information gets locations from its text (errors name
; the .ll line) under a compile unit that asks for directives only: a full
; one made NVPTX mark the module `.target sm_90, debug`, which ptxas refuses at
; -O2 ("Optimized debugging not supported": rodinia's pathfinder, hotspot and
; nw kernels, where the location info survives into the kernel).
; REQUIRES: ptxas
; RUN: rm -rf %t && nabla-compile %s --target=nvvm --chip=sm_90 -o %t
; RUN: FileCheck %s --input-file=%t/kernels.ptx
; RUN: ls %t/kernels.cubin
; CHECK: .target sm_90{{$}}

target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @scan(ptr %a, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %sum, %loop ]
  %idx = add i32 %t, %i
  %p = getelementptr float, ptr %a, i32 %idx
  %x = load float, ptr %p
  %sum = fadd float %acc, %x
  %next = add i32 %i, 1
  %more = icmp slt i32 %next, %n
  br i1 %more, label %loop, label %done
done:
  %q = getelementptr float, ptr %a, i32 %t
  store float %sum, ptr %q
  ret void
}
