; A bf16 atomic add as llm.c writes it (atomicAddX): the element's address
; aligned down to its 32-bit word through the address as an integer, the
; value placed in the word's low or high half by which one the address
; points at (`p & 3`), and cuda_bf16's pair atomicAdd, a compare-exchange
; loop of `fma.rn.bf16x2` by 1.0. The masks become byte offsets in the
; buffer (AlignedPointers.cpp), the placed halves a phi of each half
; (selects), and the loop one bf16 atomic add per half: both buffers are
; bf16, so the AD differentiates the scatter as the atomic adds it is.
; Masks of larger alignments stay a located error.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: not nabla-opt %S/Inputs/aligned-pointers-wide.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=WIDE
; WIDE: aligned-pointers-wide.ll:9:3: error: cannot raise a pointer made from a computed integer

; CHECK-LABEL: gpu.func @scatter_rows
; CHECK-SAME: (%[[OUT:.*]]: memref<?xbf16>, %[[IN:.*]]: memref<?xbf16>, %{{.*}}: memref<?xi32>
; CHECK: %[[V:.*]] = memref.load %[[IN]]
; The byte offset's low bits: which half of its word the element is.
; CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %c3_i64 : i64
; CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LOW]], %c0_i64 : i64
; CHECK: %[[H0:.*]] = arith.select %[[FIRST]], %[[V]], %[[ZERO:.*]] : bf16
; CHECK: %[[H1:.*]] = arith.select %[[FIRST]], %[[ZERO]], %[[V]] : bf16
; The word: the element moved back by those bytes (in bf16 elements).
; CHECK: %[[BACK:.*]] = arith.subi %c0_i64, %[[LOW]] : i64
; CHECK: %[[WORD:.*]] = arith.addi %{{.*}}, %{{.*}} : index
; CHECK: %[[NEXT:.*]] = arith.addi %[[WORD]], %c1 : index
; CHECK: memref.atomic_rmw addf %[[H0]], %[[OUT]][%[[WORD]]] : (bf16, memref<?xbf16>) -> bf16
; CHECK: memref.atomic_rmw addf %[[H1]], %[[OUT]][%[[NEXT]]] : (bf16, memref<?xbf16>) -> bf16
; CHECK-NOT: cmpxchg
target triple = "nvptx64-nvidia-cuda"

%struct.__nv_bfloat16 = type { i16 }

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define dso_local ptx_kernel void @scatter_rows(ptr noundef %0, ptr noundef readonly captures(none) %1, ptr noundef readonly captures(none) %2, i32 noundef %3, i32 noundef %4) {
  %6 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %7 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %8 = icmp slt i32 %6, %3
  %9 = icmp slt i32 %7, %4
  %10 = and i1 %8, %9
  br i1 %10, label %11, label %43

11:                                               ; preds = %5
  %12 = zext nneg i32 %6 to i64
  %13 = getelementptr inbounds nuw i32, ptr %2, i64 %12
  %14 = load i32, ptr %13, align 4
  %15 = mul nsw i32 %14, %4
  %16 = sext i32 %15 to i64
  %17 = getelementptr inbounds %struct.__nv_bfloat16, ptr %0, i64 %16
  %18 = zext nneg i32 %7 to i64
  %19 = getelementptr inbounds nuw %struct.__nv_bfloat16, ptr %17, i64 %18
  %20 = mul nsw i32 %4, %6
  %21 = add nuw nsw i32 %20, %7
  %22 = zext nneg i32 %21 to i64
  %23 = getelementptr inbounds nuw %struct.__nv_bfloat16, ptr %1, i64 %22
  %24 = load i16, ptr %23, align 2
  %25 = ptrtoint ptr %19 to i64
  %26 = and i64 %25, 3
  %27 = icmp eq i64 %26, 0
  br i1 %27, label %30, label %28

28:                                               ; preds = %11
  %29 = tail call i32 asm "{  mov.b32 $0, {$1,$2};}\0A", "=r,h,h"(i16 0, i16 %24)
  br label %32

30:                                               ; preds = %11
  %31 = tail call i32 asm "{  mov.b32 $0, {$1,$2};}\0A", "=r,h,h"(i16 %24, i16 0)
  br label %32

32:                                               ; preds = %30, %28
  %33 = phi i32 [ %31, %30 ], [ %29, %28 ]
  %34 = and i64 %25, -4
  %35 = inttoptr i64 %34 to ptr
  %36 = load i32, ptr %35, align 4
  br label %37

37:                                               ; preds = %37, %32
  %38 = phi i32 [ %36, %32 ], [ %41, %37 ]
  %39 = tail call i32 asm "{.reg .b32 c;\0A  mov.b32 c, 0x3f803f80U;\0A  fma.rn.bf16x2 $0,$1,c,$2;}\0A", "=r,r,r"(i32 %33, i32 %38)
  %40 = cmpxchg ptr %35, i32 %38, i32 %39 seq_cst seq_cst, align 4
  %41 = extractvalue { i32, i1 } %40, 0
  %42 = icmp eq i32 %38, %41
  br i1 %42, label %43, label %37

43:                                               ; preds = %37, %5
  ret void
}
