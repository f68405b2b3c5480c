; A pointer read from memory as an integer and converted back: thrust's
; uninitialized_fill functor (CUB's for_each kernel) copies its device_ptr
; field as an i64 and makes it a pointer again; it is read as the pointer,
; which the byval struct's field makes the kernel's buffer. Consecutive
; fields of a byval struct read as one integer (lineOfSight's Ray copies its
; float2 direction as an i64) are joined from the fields' bits, the first
; lowest.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%functor = type <{ ptr, float, [4 x i8] }>
%struct.Ray = type { %struct.float3, [4 x i8], %struct.float2 }
%struct.float3 = type { float, float, float }
%struct.float2 = type { float, float }

; CHECK-LABEL: gpu.func @fill
; CHECK-SAME: (%[[N:.*]]: i64, %[[BUF:[a-z0-9]+]]: memref<?xf32>, %[[VALUE:[a-z0-9]+]]: f32,
; CHECK: memref.store %[[VALUE]], %[[BUF]][%{{.*}}] : memref<?xf32>
define ptx_kernel void @fill(i64 %n, ptr byval(%functor) align 8 %f) {
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %bits = load i64, ptr %f, align 8
  %field = getelementptr inbounds i8, ptr %f, i64 8
  %value = load float, ptr %field, align 8
  %base = inttoptr i64 %bits to ptr
  %inside = icmp ult i64 %i, %n
  br i1 %inside, label %store, label %done
store:
  %p = getelementptr inbounds float, ptr %base, i64 %i
  store float %value, ptr %p, align 4
  br label %done
done:
  ret void
}

; CHECK-LABEL: gpu.func @march
; CHECK-SAME: %[[DX:[a-z0-9]+]]: f32, %[[DY:[a-z0-9]+]]: f32, %[[OUT:[a-z0-9]+]]: memref<?xf32>)
; CHECK-DAG: %[[XB:.*]] = arith.bitcast %[[DX]] : f32 to i32
; CHECK-DAG: %[[YB:.*]] = arith.bitcast %[[DY]] : f32 to i32
; CHECK-DAG: %[[X64:.*]] = arith.extui %[[XB]] : i32 to i64
; CHECK-DAG: %[[Y64:.*]] = arith.extui %[[YB]] : i32 to i64
; CHECK: %[[HIGH:.*]] = arith.shli %[[Y64]], %{{.*}} : i64
; CHECK: arith.ori %[[X64]], %[[HIGH]] : i64
define ptx_kernel void @march(ptr byval(%struct.Ray) align 8 %r, ptr %out) {
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %at = getelementptr inbounds i8, ptr %r, i64 16
  %dir = load i64, ptr %at, align 8
  %low = trunc i64 %dir to i32
  %shifted = lshr i64 %dir, 32
  %high = trunc i64 %shifted to i32
  %dx = bitcast i32 %low to float
  %dy = bitcast i32 %high to float
  %x = load float, ptr %r, align 8
  %ti = uitofp i32 %t to float
  %step = fmul float %dx, %ti
  %sum = fadd float %x, %step
  %y = fadd float %sum, %dy
  %i = zext i32 %t to i64
  %p = getelementptr inbounds float, ptr %out, i64 %i
  store float %y, ptr %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
