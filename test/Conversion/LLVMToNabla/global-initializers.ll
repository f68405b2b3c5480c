; The contents of module globals as clang writes them: an array initialized
; in part is a packed struct of the given elements and a zero array; an array
; of structs of one scalar type is an initializer region of insertvalues. Both
; become the memref's elements in memory order. Contents of another type than
; the kernels read are a located error (at the first use).
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: not nabla-opt %S/Inputs/global-initializer-mixed.ll --nabla-raise-llvm 2>&1 | FileCheck %S/Inputs/global-initializer-mixed.ll

; CHECK-DAG: memref.global "private" @partial : memref<6xf32> = dense<[5.000000e-01, 7.500000e-01, 1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]>
; CHECK-DAG: memref.global "private" @pairs : memref<4xi32> = dense<[1, 2, 3, 4]>
; CHECK-DAG: memref.global "private" constant @zeros : memref<8xf32> = dense<0.000000e+00>

target triple = "nvptx64-nvidia-cuda"
%struct.pair = type { i32, i32 }
@partial = dso_local addrspace(1) externally_initialized global <{ [3 x float], [3 x float] }> <{ [3 x float] [float 5.000000e-01, float 7.500000e-01, float 1.000000e+00], [3 x float] zeroinitializer }>, align 4
@pairs = dso_local addrspace(1) global [2 x %struct.pair] [%struct.pair { i32 1, i32 2 }, %struct.pair { i32 3, i32 4 }], align 4
@zeros = dso_local addrspace(4) externally_initialized constant [8 x float] zeroinitializer, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define ptx_kernel void @k(ptr %y, ptr %z) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %a = getelementptr inbounds float, ptr addrspacecast (ptr addrspace(1) @partial to ptr), i64 %i
  %v = load float, ptr %a, align 4
  %b = getelementptr inbounds float, ptr addrspacecast (ptr addrspace(4) @zeros to ptr), i64 %i
  %w = load float, ptr %b, align 4
  %s = fadd float %v, %w
  %o = getelementptr inbounds float, ptr %y, i64 %i
  store float %s, ptr %o, align 4
  %p = getelementptr inbounds i32, ptr addrspacecast (ptr addrspace(1) @pairs to ptr), i64 %i
  %q = load i32, ptr %p, align 4
  %r = getelementptr inbounds i32, ptr %z, i64 %i
  store i32 %q, ptr %r, align 4
  ret void
}
