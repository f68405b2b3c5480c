; A __shared__ tile and a local array passed to device functions, and a
; struct returned from a multi-block callee (a phi of struct type after
; inlining).
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.Pair = type { float, float }

@tile = internal addrspace(3) global [64 x float] undef, align 4

define ptx_kernel void @local_pointers(ptr %x, ptr %y) {
entry:
  %acc = alloca [2 x float], align 4
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %px = getelementptr inbounds float, ptr %x, i64 %t64
  %v = load float, ptr %px, align 4
  %slot = getelementptr inbounds float, ptr addrspace(3) @tile, i64 %t64
  store float %v, ptr addrspace(3) %slot, align 4
  call void @llvm.nvvm.barrier0()
  %generic = addrspacecast ptr addrspace(3) @tile to ptr
  %sum = call float @sum2(ptr %generic)
  store float %sum, ptr %acc, align 4
  %acc1 = getelementptr inbounds float, ptr %acc, i64 1
  store float %v, ptr %acc1, align 4
  call void @twice(ptr %acc)
  %a0 = load float, ptr %acc, align 4
  %a1 = load float, ptr %acc1, align 4
  %p = call %struct.Pair @ordered(float %a0, float %a1)
  %lo = extractvalue %struct.Pair %p, 0
  %hi = extractvalue %struct.Pair %p, 1
  %r = fsub float %hi, %lo
  %py = getelementptr inbounds float, ptr %y, i64 %t64
  store float %r, ptr %py, align 4
  ret void
}

define float @sum2(ptr %tile) noinline {
  %a = load float, ptr %tile, align 4
  %p1 = getelementptr inbounds float, ptr %tile, i64 1
  %b = load float, ptr %p1, align 4
  %s = fadd float %a, %b
  ret float %s
}

define void @twice(ptr %acc) noinline {
  %a = load float, ptr %acc, align 4
  %d = fmul float %a, 2.0
  store float %d, ptr %acc, align 4
  ret void
}

define %struct.Pair @ordered(float %a, float %b) noinline {
entry:
  %less = fcmp olt float %a, %b
  br i1 %less, label %keep, label %swap
keep:
  %k0 = insertvalue %struct.Pair poison, float %a, 0
  %k1 = insertvalue %struct.Pair %k0, float %b, 1
  ret %struct.Pair %k1
swap:
  %s0 = insertvalue %struct.Pair poison, float %b, 0
  %s1 = insertvalue %struct.Pair %s0, float %a, 1
  ret %struct.Pair %s1
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
