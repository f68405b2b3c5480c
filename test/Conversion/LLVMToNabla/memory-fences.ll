; CUDA's __threadfence_block/__threadfence/__threadfence_system
; (llvm.nvvm.membar.cta/gl/sys) and LLVM fences (HIP's __threadfence*: a
; fence at syncscope workgroup, agent or the system) raise to
; nabla.memory_fence at the matching scope; wavefront and single-thread
; fences (ordering program order already keeps) raise to nothing.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s

target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: func.func @fences(
; CHECK:         memref.store
; CHECK-NEXT:    nabla.memory_fence "workgroup"
; CHECK-NEXT:    nabla.memory_fence "device"
; CHECK-NEXT:    nabla.memory_fence "system"
; CHECK-NEXT:    nabla.memory_fence "workgroup"
; CHECK-NEXT:    nabla.memory_fence "device"
; CHECK-NEXT:    nabla.memory_fence "system"
; CHECK-NEXT:    memref.store
; CHECK-NOT:     nabla.memory_fence
; CHECK:         return
define void @fences(ptr addrspace(1) %x) {
  store float 1.0, ptr addrspace(1) %x
  call void @llvm.nvvm.membar.cta()
  call void @llvm.nvvm.membar.gl()
  call void @llvm.nvvm.membar.sys()
  fence syncscope("workgroup") seq_cst
  fence syncscope("agent") acq_rel
  fence seq_cst
  fence syncscope("wavefront") release
  fence syncscope("singlethread") acquire
  store float 2.0, ptr addrspace(1) %x
  ret void
}

declare void @llvm.nvvm.membar.cta()
declare void @llvm.nvvm.membar.gl()
declare void @llvm.nvvm.membar.sys()
