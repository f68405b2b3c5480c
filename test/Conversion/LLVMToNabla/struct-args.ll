; Structs by value into and out of device functions (clang's byval
; parameters and aggregate returns) are inlined into their callers before the
; raise: the callee's reads of a byval parameter become the values the caller
; stored into its copy, the returned aggregate's fields the values inserted,
; and a readonly byval kernel parameter copied (memcpy) for the call is read
; in place. The inlined device functions are dropped.
; Calls given a pointer into workgroup memory or a local array are inlined
; too (the raise passes device functions global buffers only).
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: nabla-opt %S/Inputs/local-pointer-call.ll --nabla-raise-llvm | FileCheck %s --check-prefix=LOCAL
; A gradient request of a function taking a struct by value (enzyme_const)
; differentiates a wrapper taking its fields; the kernel's copy of its own
; byval struct (one i64 load and store) reads the parameter's fields. A
; struct marked enzyme_dup with a shadow struct (a Julia-style device array)
; passes its pointer fields dup, their shadows from the shadow struct, and
; its other fields const (the marker declared when the module has none); a
; duplicated struct with a float field is a located error.
; RUN: nabla-opt %S/Inputs/request-struct.ll --nabla-raise-llvm | FileCheck %s --check-prefix=REQUEST
; RUN: not nabla-opt %S/Inputs/request-struct-dup.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=DUP
; RUN: nabla-opt %S/Inputs/request-struct-dup-buffers.ll --nabla-raise-llvm | FileCheck %s --check-prefix=DUPBUF

; REQUEST-NOT: func.func @_Z1fPKfPf6Params(
; REQUEST-LABEL: func.func @_Z1fPKfPf6Params_fields
; REQUEST-SAME: %[[SCALE:[a-z0-9]+]]: f32, %[[N:[a-z0-9]+]]: i32)
; REQUEST: arith.cmpi slt, %{{.*}}, %[[N]]
; REQUEST: arith.mulf %[[SCALE]]
; REQUEST-LABEL: gpu.func @_Z1gPKfPfS1_S1_6Params
; REQUEST-SAME: %[[KSCALE:[a-z0-9]+]]: f32, %[[KN:[a-z0-9]+]]: i32) kernel
; REQUEST: nabla.autodiff @_Z1fPKfPf6Params_fields({{.*}}, %[[KSCALE]], %[[KN]])
; REQUEST-SAME: #nabla.activity<const>, #nabla.activity<const>]

; DUP: request-struct-dup.ll:31:3: error: argument #2 of @_Z1fPKfPf6Params is a struct marked enzyme_dup with a float field (#0): a struct passed by value returns no derivative of its fields

; DUPBUF-LABEL: func.func @_Z1f11DeviceArrayS__fields
; DUPBUF-SAME: (%[[X:.*]]: memref<?xf32>, %{{.*}}: index, %{{.*}}: i64, %[[Y:.*]]: memref<?xf32>, %{{.*}}: index, %{{.*}}: i64)
; DUPBUF-LABEL: gpu.func @_Z1gPfS_S_S_l
; DUPBUF-SAME: (%[[KX:.*]]: memref<?xf32>, %[[KDX:.*]]: memref<?xf32>, %[[KY:.*]]: memref<?xf32>, %[[KDY:.*]]: memref<?xf32>, %[[N:.*]]: i64)
; DUPBUF: nabla.autodiff @_Z1f11DeviceArrayS__fields(%[[KX]], %[[KDX]], %{{.*}}, %[[N]], %[[KY]], %[[KDY]], %{{.*}}, %[[N]])
; DUPBUF-SAME: activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]

; LOCAL-NOT: @sum2
; LOCAL-NOT: @twice
; LOCAL-NOT: @ordered
; LOCAL-LABEL: gpu.func @local_pointers
; LOCAL-SAME: workgroup(%[[TILE:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
; LOCAL: %[[ACC:.*]] = memref.alloca() : memref<2xf32>
; LOCAL: gpu.barrier
; LOCAL: %[[A:.*]] = memref.load %[[TILE]][%c0]
; LOCAL: %[[B:.*]] = memref.load %[[TILE]][%c1]
; LOCAL: %[[SUM:.*]] = arith.addf %[[A]], %[[B]]
; LOCAL: memref.store %[[SUM]], %[[ACC]][%c0]
; LOCAL: arith.mulf
; LOCAL: memref.store {{.*}}, %[[ACC]][%c0]
; LOCAL: %[[LESS:.*]] = arith.cmpf olt
; LOCAL: arith.select %[[LESS]]
; LOCAL: arith.select %[[LESS]]
; LOCAL-NOT: call
; LOCAL: gpu.return

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.complex = type { float, float }
%struct.Params = type { float, i32, ptr }

; CHECK-NOT: @_Z5c_mul
; CHECK-NOT: @_Z5apply
; CHECK-LABEL: gpu.func @_Z6squarePKfPf6Paramsi
; CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[SCALE:.*]]: f32, %[[PERIOD:.*]]: i32, %[[TABLE:.*]]: memref<?xf32>, %[[N:.*]]: i32)
; CHECK-NOT: alloca
; CHECK-NOT: call
; CHECK: %[[RE:.*]] = memref.load %[[X]]
; CHECK: %[[IM:.*]] = memref.load %[[X]]
; CHECK: %[[RR:.*]] = arith.mulf %[[RE]], %[[RE]]
; CHECK: %[[II:.*]] = arith.mulf %[[IM]], %[[IM]]
; CHECK: arith.subf %[[RR]], %[[II]]
; CHECK: arith.mulf {{.*}}, %[[SCALE]]
; CHECK: arith.remsi {{.*}}, %[[PERIOD]]
; CHECK: memref.load %[[TABLE]]
; CHECK: memref.store {{.*}}, %[[Y]]
; CHECK-NOT: @_Z5c_mul
; CHECK-NOT: @_Z5apply
define ptx_kernel void @_Z6squarePKfPf6Paramsi(ptr readonly %x, ptr writeonly %y, ptr readonly byval(%struct.Params) align 8 %p, i32 %n) {
entry:
  %a = alloca %struct.complex, align 4
  %b = alloca %struct.complex, align 4
  %pc = alloca %struct.Params, align 8
  call void @llvm.lifetime.start.p0(ptr nonnull %pc)
  call void @llvm.memcpy.p0.p0.i64(ptr align 8 %pc, ptr align 8 %p, i64 16, i1 false)
  call void @llvm.lifetime.start.p0(ptr nonnull %a)
  call void @llvm.lifetime.start.p0(ptr nonnull %b)
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %in = icmp slt i32 %t, %n
  br i1 %in, label %body, label %exit

body:
  %two = shl nsw i32 %t, 1
  %i2 = sext i32 %two to i64
  %px = getelementptr inbounds float, ptr %x, i64 %i2
  %re = load float, ptr %px, align 4
  %pim = getelementptr i8, ptr %px, i64 4
  %im = load float, ptr %pim, align 4
  store float %re, ptr %a, align 4
  %a1 = getelementptr inbounds nuw i8, ptr %a, i64 4
  store float %im, ptr %a1, align 4
  store float %re, ptr %b, align 4
  %b1 = getelementptr inbounds nuw i8, ptr %b, i64 4
  store float %im, ptr %b1, align 4
  %s = call %struct.complex @_Z5c_mul7complexS_(ptr byval(%struct.complex) align 4 %a, ptr byval(%struct.complex) align 4 %b)
  %sre = extractvalue %struct.complex %s, 0
  %sim = extractvalue %struct.complex %s, 1
  %sum = fadd float %sre, %sim
  %r = call float @_Z5apply6Paramsfi(ptr byval(%struct.Params) align 8 %pc, float %sum, i32 %t)
  %t64 = sext i32 %t to i64
  %py = getelementptr inbounds float, ptr %y, i64 %t64
  store float %r, ptr %py, align 4
  br label %exit

exit:
  call void @llvm.lifetime.end.p0(ptr nonnull %pc)
  call void @llvm.lifetime.end.p0(ptr nonnull %a)
  call void @llvm.lifetime.end.p0(ptr nonnull %b)
  ret void
}

define %struct.complex @_Z5c_mul7complexS_(ptr readonly byval(%struct.complex) align 4 %0, ptr readonly byval(%struct.complex) align 4 %1) noinline {
  %3 = load float, ptr %0, align 4
  %4 = load float, ptr %1, align 4
  %5 = fmul float %3, %4
  %6 = getelementptr inbounds nuw i8, ptr %0, i64 4
  %7 = load float, ptr %6, align 4
  %8 = getelementptr inbounds nuw i8, ptr %1, i64 4
  %9 = load float, ptr %8, align 4
  %10 = fmul float %7, %9
  %11 = fsub float %5, %10
  %12 = fmul float %3, %9
  %13 = fmul float %4, %7
  %14 = fadd float %13, %12
  %15 = insertvalue %struct.complex poison, float %11, 0
  %16 = insertvalue %struct.complex %15, float %14, 1
  ret %struct.complex %16
}

define float @_Z5apply6Paramsfi(ptr readonly byval(%struct.Params) align 8 %0, float %1, i32 %2) noinline {
  %4 = load float, ptr %0, align 8
  %5 = fmul float %1, %4
  %6 = getelementptr inbounds nuw i8, ptr %0, i64 8
  %7 = load ptr, ptr %6, align 8
  %8 = getelementptr inbounds nuw i8, ptr %0, i64 4
  %9 = load i32, ptr %8, align 4
  %10 = srem i32 %2, %9
  %11 = sext i32 %10 to i64
  %12 = getelementptr inbounds float, ptr %7, i64 %11
  %13 = load float, ptr %12, align 4
  %14 = fadd float %5, %13
  ret float %14
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.lifetime.start.p0(ptr)
declare void @llvm.lifetime.end.p0(ptr)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
