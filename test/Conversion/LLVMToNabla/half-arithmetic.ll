; Half arithmetic as cuda_bf16/cuda_fp16 write it: PTX assembly on i16 bits
; (i32 for the x2 types). sm_80's bf16 `a * b` is `fma.rn.bf16` with a
; constant -0.0 addend, `a + b` an fma by a constant 1.0; sm_90 has
; `mul.bf16`. Each becomes the f32 operation between an extf and a truncf,
; so the buffers are bf16/f16 and the AD differentiates it; the x2 forms
; lane by lane. Other arithmetic assembly stays a located error.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: not nabla-opt %S/Inputs/half-arithmetic-saturated.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=SAT
; SAT: half-arithmetic-saturated.ll:6:3: error: cannot raise inline assembly

; CHECK-LABEL: gpu.func @bf16_ops
; CHECK-SAME: (%[[Y:.*]]: memref<?xbf16>, %[[X:.*]]: memref<?xbf16>)
; CHECK: %[[A:.*]] = memref.load %[[X]]
; CHECK: %[[B:.*]] = memref.load %[[X]]
; mul (sm_80): fma(a, b, -0.0), which is a * b
; CHECK: %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
; CHECK: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
; CHECK: %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
; CHECK: %[[PH:.*]] = arith.truncf %[[P]] : f32 to bf16
; add (sm_90)
; CHECK: %[[PF:.*]] = arith.extf %[[PH]] : bf16 to f32
; CHECK: %[[S:.*]] = arith.addf %[[PF]], %[[AF]] : f32
; CHECK: %[[SH:.*]] = arith.truncf %[[S]] : f32 to bf16
; CHECK: memref.store %[[SH]], %[[Y]]
; CHECK: %[[T:.*]] = arith.addf %[[AF]], %[[BF]] : f32
; CHECK: %[[U:.*]] = arith.subf %{{.*}}, %[[BF]] : f32
; CHECK: math.fma %{{.*}}, %[[AF]], %[[BF]] : f32
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @bf16_ops(ptr addrspace(1) %y, ptr addrspace(1) %x) {
  %a = load i16, ptr addrspace(1) %x, align 2
  %q = getelementptr inbounds i16, ptr addrspace(1) %x, i64 1
  %b = load i16, ptr addrspace(1) %q, align 2
  %p = call i16 asm "{.reg .b16 c;\0A  mov.b16 c, 0x8000U;\0A  fma.rn.bf16 $0,$1,$2,c;}\0A", "=h,h,h"(i16 %a, i16 %b)
  %s = call i16 asm "{ add.bf16 $0,$1,$2; }\0A", "=h,h,h"(i16 %p, i16 %a)
  store i16 %s, ptr addrspace(1) %y, align 2
  ; sm_80's add and subtract (fma by 1.0 and -1.0), a general fma.
  %t = call i16 asm "{.reg .b16 c;\0A  mov.b16 c, 0x3f80U;\0A  fma.rn.bf16 $0,$1,c,$2;}\0A", "=h,h,h"(i16 %a, i16 %b)
  %u = call i16 asm "{.reg .b16 c;\0A  mov.b16 c, 0xbf80U;\0A  fma.rn.bf16 $0,$2,c,$1;}\0A", "=h,h,h"(i16 %t, i16 %b)
  %v = call i16 asm "{fma.rn.bf16 $0,$1,$2,$3;\0A}", "=h,h,h,h"(i16 %u, i16 %a, i16 %b)
  %w = getelementptr inbounds i16, ptr addrspace(1) %y, i64 1
  store i16 %v, ptr addrspace(1) %w, align 2
  ret void
}

; half2: each lane widened from its half of the word, the results joined.
; CHECK-LABEL: gpu.func @half2_ops
; CHECK-SAME: (%[[Y:.*]]: memref<?xf16>, %[[X:.*]]: memref<?xf16>
; CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
; CHECK: arith.truncf %{{.*}} : f32 to f16
; CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
; CHECK: arith.truncf %{{.*}} : f32 to f16
; CHECK-NOT: arith.bitcast
; CHECK: gpu.return
define ptx_kernel void @half2_ops(ptr addrspace(1) %y, ptr addrspace(1) %x) {
  %v = load i32, ptr addrspace(1) %x, align 4
  %m = call i32 asm "{mul.f16x2 $0,$1,$2;\0A}", "=r,r,r"(i32 %v, i32 %v)
  store i32 %m, ptr addrspace(1) %y, align 4
  ret void
}
