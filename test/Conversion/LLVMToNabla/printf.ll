; Device printf as clang emits it (vprintf with a format global and a struct
; of promoted arguments) becomes gpu.printf: the format without its NUL, the
; stored values in field order, a float promoted to double printed from the
; float; the buffer, its stores and the format global go. A call without
; arguments passes null. A string argument is a located error.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: not nabla-opt %S/Inputs/printf-string.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=STRING

; CHECK-LABEL: gpu.func @report
; CHECK-NOT: memref.alloca
; CHECK: %[[X:.*]] = memref.load
; CHECK: gpu.printf "x[%d] = %f, n=%lld\0A", %{{.*}}, %[[X]], %{{.*}} : i32, f32, i64
; CHECK: gpu.printf "done\0A"
; CHECK-NOT: llvm.mlir.global
; STRING: printf-string.ll:13:3: error: printf argument #0 is a pointer or string (%s, %p)

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%printf_args = type { i32, double, i64 }

@.str = private unnamed_addr constant [20 x i8] c"x[%d] = %f, n=%lld\0A\00", align 1
@.str.1 = private unnamed_addr constant [6 x i8] c"done\0A\00", align 1

define ptx_kernel void @report(ptr %x, i64 %n) {
  %buffer = alloca %printf_args, align 8
  %tid = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %index = zext i32 %tid to i64
  %address = getelementptr inbounds float, ptr %x, i64 %index
  %value = load float, ptr %address, align 4
  %wide = fpext float %value to double
  store i32 %tid, ptr %buffer, align 8
  %second = getelementptr inbounds i8, ptr %buffer, i64 8
  store double %wide, ptr %second, align 8
  %third = getelementptr inbounds %printf_args, ptr %buffer, i32 0, i32 2
  store i64 %n, ptr %third, align 8
  %r = call i32 @vprintf(ptr @.str, ptr %buffer)
  %r2 = call i32 @vprintf(ptr @.str.1, ptr null)
  ret void
}

declare i32 @vprintf(ptr, ptr)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
