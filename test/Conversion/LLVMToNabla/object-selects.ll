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

; A phi of pointers into three objects: one phi per object, a phi of which
; was chosen, and selects on it, each access then a branch per object.
; CHECK-LABEL: gpu.func @three
; CHECK-SAME: (%[[L:.*]]: memref<?xf32>, %[[M:.*]]: memref<?xf32>, %[[R:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[C:.*]]: i32)
; CHECK: %[[OFF:.*]]:2 = scf.if
; CHECK: %[[T:.*]] = arith.index_cast
; CHECK: %[[ROFF:.*]] = arith.addi %[[OFF]]#0, %[[T]]
; CHECK: scf.if
; CHECK-DAG: memref.load %[[L]][%[[T]]]
; CHECK-DAG: memref.load %[[M]][%[[T]]]
; CHECK-DAG: memref.load %[[R]][%[[ROFF]]]
; CHECK: memref.store
define ptx_kernel void @three(ptr %l, ptr %m, ptr %r, ptr %y, i32 %c) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  switch i32 %c, label %mid [ i32 0, label %left
                              i32 1, label %right ]
left:
  br label %join
right:
  %r1 = getelementptr inbounds float, ptr %r, i64 1
  br label %join
mid:
  br label %join
join:
  %src = phi ptr [ %l, %left ], [ %r1, %right ], [ %m, %mid ]
  %p = getelementptr inbounds float, ptr %src, i64 %t64
  %v = load float, ptr %p, align 4
  %q = getelementptr inbounds float, ptr %y, i64 %t64
  store float %v, ptr %q, align 4
  ret void
}
