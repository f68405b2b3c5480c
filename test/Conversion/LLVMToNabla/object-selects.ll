; A pointer that selects between two objects: a GEP of the select becomes a
; select of GEPs, and each load or store through it a branch with the
; access on each side (lifted to scf.if; nothing is speculated). A select
; between offsets into one object keeps its form.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s

target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: gpu.func @pick
; CHECK-SAME: (%[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[Z:.*]]: memref<?xf32>, %[[C:.*]]: i32)
; CHECK: %[[FLIP:.*]] = arith.cmpi ne
; CHECK: %[[V:.*]] = scf.if %[[FLIP]] -> (f32) {
; CHECK:   %[[VA:.*]] = memref.load %[[A]]
; CHECK:   scf.yield %[[VA]]
; CHECK: } else {
; CHECK:   %[[VB:.*]] = memref.load %[[B]]
; CHECK:   scf.yield %[[VB]]
; CHECK: }
; CHECK: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]]
; CHECK: scf.if %[[FLIP]] {
; CHECK:   memref.store %[[SQ]], %[[Y]]
; CHECK: } else {
; CHECK:   memref.store %[[SQ]], %[[Z]]
; CHECK: }
; The same object at two offsets: a select of offsets.
; CHECK: %[[OFF:.*]] = arith.select
; CHECK: memref.load %[[A]][%[[OFF]]]
define ptx_kernel void @pick(ptr %a, ptr %b, ptr %y, ptr %z, i32 %c) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %flip = icmp ne i32 %c, 0
  %src = select i1 %flip, ptr %a, ptr %b
  %p = getelementptr inbounds float, ptr %src, i64 %t64
  %v = load float, ptr %p, align 4
  %sq = fmul float %v, %v
  %dst = select i1 %flip, ptr %y, ptr %z
  %q = getelementptr inbounds float, ptr %dst, i64 %t64
  store float %sq, ptr %q, align 4
  %a1 = getelementptr inbounds float, ptr %a, i64 1
  %same = select i1 %flip, ptr %a, ptr %a1
  %w = load float, ptr %same, align 4
  %r = getelementptr inbounds float, ptr %y, i64 0
  store float %w, ptr %r, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
