; Half-precision storage as CUDA's headers leave it: bf16 values are i16 bits
; converted in inline assembly, and packed code (llm.c's Packed128) moves
; eight of them as an int4 through a local array. The raise views every
; such buffer as bf16 (local arrays included), so nothing reinterprets
; integer bits as floats; the packed kernel runs against NumPy.
; RUN: rm -rf %t && mkdir -p %t
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: %python -c "import numpy as np; x = np.linspace(-2, 2, 128, dtype=np.float32).view(np.uint32); np.save('%t/x.npy', ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint16)); np.save('%t/y.npy', np.zeros(128, np.uint16))"
; RUN: nabla-run %s --kernel=twice_packed --grid=1 --block=16 --arg=%t/y.npy --arg=%t/x.npy --arg=i32:128 --out=%t/a
; RUN: %python -c "import numpy as np; f = lambda b: (b.astype(np.uint32) << 16).view(np.float32); x = f(np.load('%t/x.npy')); y = f(np.load('%t/a/arg0.npy')); print('packed', bool((y == 2 * x).all()))" | FileCheck %s --check-prefix=OUT

; CHECK-LABEL: gpu.func @scale_scalar
; CHECK-SAME: (%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>
; CHECK: arith.extf %{{.*}} : bf16 to f32
; CHECK: arith.truncf %{{.*}} : f32 to bf16
; CHECK-NOT: arith.bitcast
; CHECK-LABEL: gpu.func @twice_packed
; CHECK-SAME: (%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>
; CHECK-NOT: i16
; CHECK-NOT: arith.bitcast
; CHECK: gpu.return
; OUT: packed True

target triple = "nvptx64-nvidia-cuda"

%struct.__nv_bfloat16 = type { i16 }
%struct.Packed128 = type { [8 x %struct.__nv_bfloat16] }

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define ptx_kernel void @scale_scalar(ptr %out, ptr %inp, i32 %n) {
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %w = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bw = mul i32 %b, %w
  %i = add i32 %bw, %t
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %i64 = sext i32 %i to i64
  %p = getelementptr inbounds %struct.__nv_bfloat16, ptr %inp, i64 %i64
  %h = load i16, ptr %p, align 2
  %x = call float asm "{ mov.b32 $0, {0,$1};}\0A", "=f,h"(i16 %h)
  %y = fmul contract float %x, 3.000000e+00
  %r = call i16 asm "{  cvt.rn.bf16.f32 $0, $1;}\0A", "=h,f"(float %y)
  %q = getelementptr inbounds %struct.__nv_bfloat16, ptr %out, i64 %i64
  store i16 %r, ptr %q, align 2
  br label %exit
exit:
  ret void
}

; out[8i .. 8i+8) = 2 * inp[8i .. 8i+8): an int4 load (cache-hinted), its
; words split into a local Packed128, a loop over the eight halves into
; another, and that one stored back as four words.
define ptx_kernel void @twice_packed(ptr %out, ptr %inp, i32 %n) {
entry:
  %packed_out = alloca %struct.Packed128, align 16
  %packed_in = alloca %struct.Packed128, align 16
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = shl i32 %t, 3
  %in = icmp slt i32 %i, %n
  br i1 %in, label %load, label %exit
load:
  %i64 = sext i32 %i to i64
  %src = getelementptr inbounds %struct.__nv_bfloat16, ptr %inp, i64 %i64
  %words = call { i32, i32, i32, i32 } asm "ld.global.cs.v4.s32 {$0,$1,$2,$3}, [$4];", "=r,=r,=r,=r,l"(ptr %src)
  %w0 = extractvalue { i32, i32, i32, i32 } %words, 0
  %w1 = extractvalue { i32, i32, i32, i32 } %words, 1
  %w2 = extractvalue { i32, i32, i32, i32 } %words, 2
  %w3 = extractvalue { i32, i32, i32, i32 } %words, 3
  %h0 = trunc i32 %w0 to i16
  %s0 = lshr i32 %w0, 16
  %h1 = trunc nuw i32 %s0 to i16
  %h2 = trunc i32 %w1 to i16
  %s1 = lshr i32 %w1, 16
  %h3 = trunc nuw i32 %s1 to i16
  %h4 = trunc i32 %w2 to i16
  %s2 = lshr i32 %w2, 16
  %h5 = trunc nuw i32 %s2 to i16
  %h6 = trunc i32 %w3 to i16
  %s3 = lshr i32 %w3, 16
  %h7 = trunc nuw i32 %s3 to i16
  store i16 %h0, ptr %packed_in, align 16
  %a1 = getelementptr inbounds nuw i8, ptr %packed_in, i64 2
  store i16 %h1, ptr %a1, align 2
  %a2 = getelementptr inbounds nuw i8, ptr %packed_in, i64 4
  store i16 %h2, ptr %a2, align 4
  %a3 = getelementptr inbounds nuw i8, ptr %packed_in, i64 6
  store i16 %h3, ptr %a3, align 2
  %a4 = getelementptr inbounds nuw i8, ptr %packed_in, i64 8
  store i16 %h4, ptr %a4, align 8
  %a5 = getelementptr inbounds nuw i8, ptr %packed_in, i64 10
  store i16 %h5, ptr %a5, align 2
  %a6 = getelementptr inbounds nuw i8, ptr %packed_in, i64 12
  store i16 %h6, ptr %a6, align 4
  %a7 = getelementptr inbounds nuw i8, ptr %packed_in, i64 14
  store i16 %h7, ptr %a7, align 2
  br label %loop
loop:
  %k = phi i32 [ 0, %load ], [ %k1, %loop ]
  %k64 = zext nneg i32 %k to i64
  %pk = getelementptr inbounds nuw %struct.__nv_bfloat16, ptr %packed_in, i64 %k64
  %hk = load i16, ptr %pk, align 2
  %xk = call float asm "{ mov.b32 $0, {0,$1};}\0A", "=f,h"(i16 %hk)
  %yk = fmul contract float %xk, 2.000000e+00
  %rk = call i16 asm "{  cvt.rn.bf16.f32 $0, $1;}\0A", "=h,f"(float %yk)
  %ok = getelementptr inbounds nuw %struct.__nv_bfloat16, ptr %packed_out, i64 %k64
  store i16 %rk, ptr %ok, align 2
  %k1 = add nuw nsw i32 %k, 1
  %done = icmp eq i32 %k1, 8
  br i1 %done, label %store, label %loop
store:
  %dst = getelementptr inbounds %struct.__nv_bfloat16, ptr %out, i64 %i64
  %o0 = load i32, ptr %packed_out, align 16
  %b1 = getelementptr inbounds nuw i8, ptr %packed_out, i64 4
  %o1 = load i32, ptr %b1, align 4
  %b2 = getelementptr inbounds nuw i8, ptr %packed_out, i64 8
  %o2 = load i32, ptr %b2, align 8
  %b3 = getelementptr inbounds nuw i8, ptr %packed_out, i64 12
  %o3 = load i32, ptr %b3, align 4
  store i32 %o0, ptr %dst, align 16
  %d1 = getelementptr inbounds nuw i8, ptr %dst, i64 4
  store i32 %o1, ptr %d1, align 4
  %d2 = getelementptr inbounds nuw i8, ptr %dst, i64 8
  store i32 %o2, ptr %d2, align 8
  %d3 = getelementptr inbounds nuw i8, ptr %dst, i64 12
  store i32 %o3, ptr %d3, align 4
  br label %exit
exit:
  ret void
}
