; __syncwarp: llvm.nvvm.bar.warp.sync with a full mask, and HIP's wave
; barrier, raise to nabla.subgroup_barrier (the warp, not the block); over a
; partial mask every lane waits too (partial_masks.ll).
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: sed 's/i32 -1)/i32 65535)/' %s > %t.ll
; RUN: nabla-opt %t.ll --nabla-raise-llvm | FileCheck %s

target triple = "nvptx64-nvidia-cuda"

@s = internal addrspace(3) global [64 x float] undef, align 4

; CHECK-LABEL: gpu.func @exchange
; CHECK: memref.store
; CHECK: nabla.subgroup_barrier
; CHECK-NEXT: memref.load
; CHECK-NEXT: nabla.subgroup_barrier
; CHECK-NOT: gpu.barrier
; CHECK: gpu.return
define ptx_kernel void @exchange(ptr addrspace(1) %y) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %slot = getelementptr inbounds [64 x float], ptr addrspace(3) @s, i64 0, i64 %t64
  store float 1.0, ptr addrspace(3) %slot, align 4
  %p = xor i32 %t, 1
  %p64 = zext i32 %p to i64
  %other = getelementptr inbounds [64 x float], ptr addrspace(3) @s, i64 0, i64 %p64
  call void @llvm.nvvm.bar.warp.sync(i32 -1)
  %v = load float, ptr addrspace(3) %other, align 4
  call void @llvm.amdgcn.wave.barrier()
  %out = getelementptr inbounds float, ptr addrspace(1) %y, i64 %t64
  store float %v, ptr addrspace(1) %out, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.bar.warp.sync(i32)
declare void @llvm.amdgcn.wave.barrier()
