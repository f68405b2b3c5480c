; A texture fetch (CUDA's tex2D<float4> on a cudaTextureObject_t, as
; cuda-samples' dct8x8 reads its image) is refused at its line with what to
; do instead, not as anonymous inline assembly.
; RUN: not nabla-opt %s --nabla-raise-llvm 2>&1 | FileCheck %s
; CHECK: texture.ll:[[#@LINE+8]]:3: error: cannot raise a texture or surface access ('tex.2d.v4.f32.f32'): textures are not supported; read the image from a buffer parameter instead

target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define ptx_kernel void @k(i64 %tex, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %u = sitofp i32 %t to float
  %v = fadd float %u, 5.000000e-01
  %r = tail call { float, float, float, float } asm "tex.2d.v4.f32.f32\09{$0, $1, $2, $3}, [$4, {$5, $6}];", "=f,=f,=f,=f,l,f,f"(i64 %tex, float %v, float %v)
  %x = extractvalue { float, float, float, float } %r, 0
  %p = getelementptr float, ptr %y, i32 %t
  store float %x, ptr %p
  ret void
}
