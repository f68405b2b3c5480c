; CUB's shuffles in PTX assembly (warp_reduce_shfl.cuh, warp_scan_shfl.cuh,
; util_ptx.cuh, as clang emits them): a word shuffle, and shuffles whose valid
; lanes add (f32, s32, u64 and f64 as two word shuffles) become gpu.shuffle
; with the add kept where the source lane is valid. Another instruction in
; such a block keeps it assembly, refused at its line.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: not nabla-opt %S/Inputs/cub-shuffle-other.ll --nabla-raise-llvm 2>&1 | FileCheck %S/Inputs/cub-shuffle-other.ll

; CHECK-LABEL: gpu.func @k
; The word shuffle: down by 1 over the whole warp.
; CHECK: gpu.shuffle down %{{.*}}, %{{.*}}, %{{.*}} : i32
; The f32 step: shuffle down, add where lane + 2 <= 31.
; CHECK: %[[SF:.*]], %{{.*}} = gpu.shuffle down %{{.*}}, %{{.*}}, %{{.*}} : i32
; CHECK: %[[F:.*]] = arith.bitcast %[[SF]] : i32 to f32
; CHECK: %[[VALID:.*]] = arith.cmpi sle
; CHECK: %[[SUM:.*]] = arith.addf %[[F]], %{{.*}} : f32
; CHECK: arith.select %[[VALID]], %[[SUM]], %[[F]] : f32
; The s32 scan step: shuffle up, add where lane - 4 >= 0.
; CHECK: gpu.shuffle up
; CHECK: arith.cmpi sge
; CHECK: arith.addi
; The 64-bit steps: two word shuffles each.
; CHECK-COUNT-2: gpu.shuffle down
; CHECK: arith.addi %{{.*}} : i64
; CHECK-COUNT-2: gpu.shuffle up
; CHECK: arith.addf %{{.*}} : f64
; CHECK-NOT: llvm.inline_asm

target triple = "nvptx64-nvidia-cuda"
define ptx_kernel void @k(ptr %out) {
  %w = tail call i32 asm sideeffect "shfl.sync.down.b32 $0, $1, $2, $3, $4;", "=r,r,r,r,r"(i32 7, i32 1, i32 31, i32 -1)
  %p0 = getelementptr inbounds i32, ptr %out, i64 0
  store i32 %w, ptr %p0, align 4
  %f = tail call float asm sideeffect "{  .reg .f32 r0;  .reg .pred p;  shfl.sync.down.b32 r0|p, $1, $2, $3, $5;  @p add.f32 r0, r0, $4;  mov.f32 $0, r0;}", "=f,f,r,r,f,r"(float 1.5, i32 2, i32 31, float 1.5, i32 -1)
  %p1 = getelementptr inbounds float, ptr %out, i64 1
  store float %f, ptr %p1, align 4
  %s = tail call i32 asm sideeffect "{  .reg .s32 r0;  .reg .pred p;  shfl.sync.up.b32 r0|p, $1, $2, $3, $5;  @p add.s32 r0, r0, $4;  mov.s32 $0, r0;}", "=r,r,r,r,r,r"(i32 3, i32 4, i32 0, i32 3, i32 -1)
  %p2 = getelementptr inbounds i32, ptr %out, i64 2
  store i32 %s, ptr %p2, align 4
  %l = tail call i64 asm sideeffect "{  .reg .u32 lo;  .reg .u32 hi;  .reg .pred p;  mov.b64 {lo, hi}, $1;  shfl.sync.down.b32 lo|p, lo, $2, $3, $4;  shfl.sync.down.b32 hi|p, hi, $2, $3, $4;  mov.b64 $0, {lo, hi};  @p add.u64 $0, $0, $1;}", "=l,l,r,r,r"(i64 5, i32 8, i32 31, i32 -1)
  %p3 = getelementptr inbounds i64, ptr %out, i64 2
  store i64 %l, ptr %p3, align 8
  %d = tail call double asm sideeffect "{  .reg .u32 lo;  .reg .u32 hi;  .reg .pred p;  .reg .f64 r0;  mov.b64 $0, $1;  mov.b64 {lo, hi}, $1;  shfl.sync.up.b32 lo|p, lo, $2, $3, $4;  shfl.sync.up.b32 hi|p, hi, $2, $3, $4;  mov.b64 r0, {lo, hi};  @p add.f64 $0, $0, r0;}", "=d,d,r,r,r"(double 2.5, i32 16, i32 0, i32 -1)
  %p4 = getelementptr inbounds double, ptr %out, i64 3
  store double %d, ptr %p4, align 8
  ret void
}
