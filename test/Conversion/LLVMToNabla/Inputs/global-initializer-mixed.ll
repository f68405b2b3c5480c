; A struct of a float and an int read as floats: the contents are not the
; elements the kernels read (checked by ../global-initializers.ll).
; CHECK: global-initializer-mixed.ll:[[#@LINE+6]]:0: error: cannot raise the initializer of @mixed (only numbers, and arrays and structs of numbers of the type the kernels access it as)
target triple = "nvptx64-nvidia-cuda"
%struct.mixed = type { float, i32 }
@mixed = dso_local addrspace(1) global %struct.mixed { float 1.0, i32 7 }, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define ptx_kernel void @k(ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %a = getelementptr inbounds float, ptr addrspacecast (ptr addrspace(1) @mixed to ptr), i64 %i
  %v = load float, ptr %a, align 4
  %o = getelementptr inbounds float, ptr %y, i64 %i
  store float %v, ptr %o, align 4
  ret void
}
