; A function named like the library's sincos with another signature (one
; output pointer, no result) is not rewritten: the raise refuses the call.
target triple = "nvptx64-nvidia-cuda"
declare void @sincosf(float, ptr)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define ptx_kernel void @k(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %s = alloca float
  %px = getelementptr float, ptr %x, i32 %t
  %v = load float, ptr %px
  call void @sincosf(float %v, ptr %s)
  %r = load float, ptr %s
  %py = getelementptr float, ptr %y, i32 %t
  store float %r, ptr %py
  ret void
}
