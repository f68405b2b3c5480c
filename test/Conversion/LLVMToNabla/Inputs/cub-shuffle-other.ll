; A shuffle block with an instruction outside CUB's (a multiply where the
; lane is valid) stays assembly and is refused at its line
; (../cub-shuffles.ll).
; CHECK: cub-shuffle-other.ll:[[#@LINE+3]]:3: error: cannot raise inline assembly
target triple = "nvptx64-nvidia-cuda"
define ptx_kernel void @k(ptr %out) {
  %f = tail call float asm sideeffect "{  .reg .f32 r0;  .reg .pred p;  shfl.sync.down.b32 r0|p, $1, $2, $3, $5;  @p mul.f32 r0, r0, $4;  mov.f32 $0, r0;}", "=f,f,r,r,f,r"(float 1.5, i32 2, i32 31, float 1.5, i32 -1)
  store float %f, ptr %out, align 4
  ret void
}
