; Vector values (a uchar4 stored whole, a bf16x2-style pair of i16, float4
; arithmetic as the SLP vectorizer packs it) become their elements before
; raising (LLVM's scalarizer, loads and stores included), and run on the
; default device against NumPy.
; RUN: rm -rf %t && mkdir -p %t
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: %python -c "import numpy as np; np.save('%t/p.npy', np.arange(256, dtype=np.uint8)); np.save('%t/q.npy', np.zeros(256, np.uint8)); np.save('%t/x.npy', np.linspace(-1, 1, 256, dtype=np.float32)); np.save('%t/y.npy', np.zeros(256, np.float32))"
; RUN: nabla-run %s --kernel=swizzle --grid=1 --block=64 --arg=%t/p.npy --arg=%t/q.npy --out=%t/a
; RUN: nabla-run %s --kernel=affine4 --grid=1 --block=64 --arg=%t/x.npy --arg=%t/y.npy --out=%t/b
; RUN: %python -c "import numpy as np; p = np.arange(256, dtype=np.uint8).reshape(64, 4); q = np.load('%t/a/arg1.npy').reshape(64, 4); x = np.linspace(-1, 1, 256, dtype=np.float32); y = np.load('%t/b/arg1.npy'); print('swizzle', bool((q == np.stack([p[:, 2], p[:, 1], p[:, 0], np.full(64, 255, np.uint8)], 1)).all())); print('affine', bool(np.allclose(y, 2 * x + 1)))" | FileCheck %s --check-prefix=OUT
; CHECK-LABEL: gpu.func @swizzle
; CHECK-SAME: memref<?xi8>
; CHECK-NOT: vector
; CHECK-LABEL: gpu.func @affine4
; CHECK-NOT: vector
; CHECK: gpu.return
; OUT: swizzle True
; OUT: affine True

target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @swizzle(ptr %in, ptr %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr <4 x i8>, ptr %in, i32 %t
  %v = load <4 x i8>, ptr %p, align 4
  %r = shufflevector <4 x i8> %v, <4 x i8> <i8 poison, i8 poison, i8 poison, i8 -1>, <4 x i32> <i32 2, i32 1, i32 0, i32 7>
  %q = getelementptr <4 x i8>, ptr %out, i32 %t
  store <4 x i8> %r, ptr %q, align 4
  ret void
}

define ptx_kernel void @affine4(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr <4 x float>, ptr %x, i32 %t
  %v = load <4 x float>, ptr %p, align 16
  %m = fmul <4 x float> %v, <float 2.0, float 2.0, float 2.0, float 2.0>
  %a = fadd <4 x float> %m, <float 1.0, float 1.0, float 1.0, float 1.0>
  %q = getelementptr <4 x float>, ptr %y, i32 %t
  store <4 x float> %a, ptr %q, align 16
  ret void
}
