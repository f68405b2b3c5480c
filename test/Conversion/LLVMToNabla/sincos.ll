; Sine and cosine returned together: libdevice's sincos family stores both
; through pointers (sincospi of pi * x), OCML returns the sine and stores the
; cosine through a private pointer, llvm.sincos returns a pair. Each becomes
; math.sin and math.cos of the argument, stored where the call stored them.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: not nabla-opt %S/Inputs/sincos-signature.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=SIGNATURE

; CHECK-LABEL: gpu.func @nv(
; CHECK: %[[PI:.*]] = arith.constant 3.14159274 : f32
; CHECK: %[[S:.*]] = memref.alloca() : memref<1xf32>
; CHECK: %[[C:.*]] = memref.alloca() : memref<1xf32>
; CHECK: %[[X:.*]] = memref.load
; CHECK: %[[COS:.*]] = math.cos %[[X]] : f32
; CHECK: %[[SIN:.*]] = math.sin %[[X]] : f32
; CHECK: memref.store %[[SIN]], %[[S]]
; CHECK: memref.store %[[COS]], %[[C]]
; CHECK: %[[PIX:.*]] = arith.mulf %[[X]], %[[PI]] : f32
; CHECK-DAG: math.sin %[[PIX]] : f32
; CHECK-DAG: math.cos %[[PIX]] : f32
; CHECK: %[[D:.*]] = memref.load %{{.*}} : memref<?xf64>
; CHECK-DAG: math.sin %[[D]] : f64
; CHECK-DAG: math.cos %[[D]] : f64
; CHECK-NOT: llvm.call
; CHECK: return

; CHECK-LABEL: gpu.func @ocml(
; CHECK: %[[X:.*]] = memref.load
; CHECK-DAG: %[[COS:.*]] = math.cos %[[X]] : f32
; CHECK-DAG: %[[SIN:.*]] = math.sin %[[X]] : f32
; CHECK: arith.subf %[[SIN]], %[[COS]] : f32
; CHECK: return

; CHECK-LABEL: gpu.func @pair(
; CHECK: %[[X:.*]] = memref.load
; CHECK-DAG: %[[COS:.*]] = math.cos %[[X]] : f32
; CHECK-DAG: %[[SIN:.*]] = math.sin %[[X]] : f32
; CHECK: arith.divf %[[SIN]], %[[COS]] : f32
; CHECK: return

; SIGNATURE: sincos-signature.ll:11:3: error: cannot raise 'llvm.call'

target triple = "nvptx64-nvidia-cuda"
declare void @__nv_sincosf(float, ptr, ptr)
declare void @__nv_sincospif(float, ptr, ptr)
declare void @__nv_sincos(double, ptr, ptr)
declare float @__ocml_sincos_f32(float, ptr addrspace(5))
declare { float, float } @llvm.sincos.f32(float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @nv(ptr %x, ptr %d, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %s = alloca float
  %c = alloca float
  %ds = alloca double
  %dc = alloca double
  %px = getelementptr float, ptr %x, i32 %t
  %v = load float, ptr %px
  call void @__nv_sincosf(float %v, ptr %s, ptr %c)
  %s0 = load float, ptr %s
  %c0 = load float, ptr %c
  call void @__nv_sincospif(float %v, ptr %s, ptr %c)
  %s1 = load float, ptr %s
  %c1 = load float, ptr %c
  %pd = getelementptr double, ptr %d, i32 %t
  %w = load double, ptr %pd
  call void @__nv_sincos(double %w, ptr %ds, ptr %dc)
  %s2 = load double, ptr %ds
  %c2 = load double, ptr %dc
  %a = fmul float %s0, %c0
  %b = fmul float %s1, %c1
  %e = fadd float %a, %b
  %f = fmul double %s2, %c2
  %g = fptrunc double %f to float
  %r = fadd float %e, %g
  %py = getelementptr float, ptr %y, i32 %t
  store float %r, ptr %py
  ret void
}

define ptx_kernel void @ocml(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = alloca float, addrspace(5)
  %px = getelementptr float, ptr %x, i32 %t
  %v = load float, ptr %px
  %s = call float @__ocml_sincos_f32(float %v, ptr addrspace(5) %c)
  %cv = load float, ptr addrspace(5) %c
  %r = fsub float %s, %cv
  %py = getelementptr float, ptr %y, i32 %t
  store float %r, ptr %py
  ret void
}

define ptx_kernel void @pair(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %px = getelementptr float, ptr %x, i32 %t
  %v = load float, ptr %px
  %sc = call { float, float } @llvm.sincos.f32(float %v)
  %s = extractvalue { float, float } %sc, 0
  %c = extractvalue { float, float } %sc, 1
  %r = fdiv float %s, %c
  %py = getelementptr float, ptr %y, i32 %t
  store float %r, ptr %py
  ret void
}
