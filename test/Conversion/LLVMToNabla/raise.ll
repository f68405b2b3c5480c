; --nabla-raise-llvm on hand-written LLVM IR of the shapes clang and Julia
; produce: every pointer becomes an element offset into the memref of its
; root, typed by its accesses.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: nabla-opt %s --nabla-raise-llvm=module-name=frontend | FileCheck %s --check-prefix=NAME

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%Pair = type { ptr, i32 }

@tile = internal addrspace(3) global [32 x float] undef
@table = internal constant [3 x float] [float 1.0, float 2.0, float 4.0]
@enzyme_out = external global i32
@enzyme_const = external global i32

declare float @__nv_expf(float)
declare float @llvm.fmuladd.f32(float, float, float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare float @__enzyme_autodiff(ptr, ...)

; NAME: gpu.module @frontend
; CHECK-LABEL: gpu.module @kernels
; CHECK-DAG: memref.global "private" constant @table : memref<3xf32> = dense<[1.000000e+00, 2.000000e+00, 4.000000e+00]>

; A byval struct is flattened into its fields; an i8 GEP whose offset is a
; multiple of the element size indexes elements; the shared tile becomes a
; workgroup attribution.
; CHECK-LABEL: gpu.func @bytes(
; CHECK-SAME: %[[DATA:.*]]: memref<?xf32>, %[[N:.*]]: i32)
; CHECK-SAME: workgroup(%[[TILE:.*]] : memref<32xf32, #gpu.address_space<workgroup>>) kernel
; CHECK: %[[TID:.*]] = gpu.thread_id x
; CHECK: %[[I:.*]] = arith.index_cast %[[TID]] : index to i32
; CHECK: %[[BYTES:.*]] = arith.shli
; CHECK: %[[ELEM:.*]] = arith.divsi %{{.*}}, %c4 : index
; CHECK: %[[V:.*]] = memref.load %[[DATA]][%[[ELEM]]] : memref<?xf32>
; CHECK: %[[E:.*]] = math.exp %[[V]] : f32
; CHECK: memref.store %[[E]], %[[TILE]][%{{.*}}] : memref<32xf32, #gpu.address_space<workgroup>>
; CHECK: gpu.barrier
; CHECK: %[[S:.*]], %{{.*}} = gpu.shuffle down %{{.*}}, %c16_i32, %c32_i32 : f32
; CHECK: memref.atomic_rmw addf %[[S]], %[[DATA]][%c0] : (f32, memref<?xf32>) -> f32
define ptx_kernel void @bytes(ptr byval(%Pair) %p) {
  %data = load ptr, ptr %p
  %n.ptr = getelementptr i8, ptr %p, i64 8
  %n = load i32, ptr %n.ptr
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = zext i32 %tid to i64
  %bytes = shl i64 %t, 2
  %a.ptr = getelementptr i8, ptr %data, i64 %bytes
  %a = load float, ptr %a.ptr
  %e = call float @__nv_expf(float %a)
  %s.ptr = getelementptr [32 x float], ptr addrspace(3) @tile, i64 0, i64 %t
  store float %e, ptr addrspace(3) %s.ptr
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %s = load float, ptr addrspace(3) %s.ptr
  %sh = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %s, i32 16, i32 31)
  %old = atomicrmw fadd ptr %data, float %sh monotonic
  ret void
}

; A device function: pointers are (memref, offset) pairs; a constant table
; becomes a private memref.global.
; CHECK-LABEL: func.func @poly(
; CHECK-SAME: %[[X:.*]]: f32, %[[C:.*]]: memref<?xf32>, %[[OFF:.*]]: index, %{{.*}}: i32) -> f32
; CHECK: memref.get_global @table : memref<3xf32>
; CHECK: memref.load %[[C]][%[[OFF]]] : memref<?xf32>
; CHECK: math.fma
define float @poly(float %x, ptr %c, i32 %k) {
  %c0 = load float, ptr %c
  %t.ptr = getelementptr [3 x float], ptr @table, i64 0, i32 %k
  %t = load float, ptr %t.ptr
  %r = call float @llvm.fmuladd.f32(float %x, float %t, float %c0)
  ret float %r
}

; An Enzyme request with an active scalar (enzyme_out): its gradient is the
; request's result; a pointer without a marker is dup (Enzyme's default).
; CHECK-LABEL: gpu.func @grad_poly(
; CHECK-SAME: %[[GX:.*]]: f32, %[[GC:.*]]: memref<?xf32>, %[[GDC:.*]]: memref<?xf32>, %[[GK:.*]]: i32, %[[OUT:.*]]: memref<?xf32>) kernel
; CHECK: %[[G:.*]] = nabla.autodiff @poly(%[[GX]], %[[GC]], %[[GDC]], %c0, %[[GK]], %cst)
; CHECK-SAME: activity = [#nabla.activity<active>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]
; CHECK-SAME: ret_activity = [#nabla.activity<activenoneed>]
; CHECK-SAME: (f32, memref<?xf32>, memref<?xf32>, index, i32, f32) -> f32
; CHECK: memref.store %[[G]], %[[OUT]][%c0] : memref<?xf32>
define ptx_kernel void @grad_poly(float %x, ptr %c, ptr %dc, i32 %k, ptr %out) {
  %o = load i32, ptr @enzyme_out
  %q = load i32, ptr @enzyme_const
  %g = call float (ptr, ...) @__enzyme_autodiff(ptr @poly, i32 %o, float %x, ptr %c, ptr %dc, i32 %q, i32 %k)
  store float %g, ptr %out
  ret void
}
; CHECK-NOT: enzyme_out
; CHECK-NOT: llvm.
