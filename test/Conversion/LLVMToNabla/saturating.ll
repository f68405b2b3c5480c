; Saturating integer intrinsics (clang emits them for clamped arithmetic) are
; raised to compares and selects and run on the default device against a
; NumPy reference, edge values included (0 - 1, INT_MAX + 1, INT_MIN - 1).
; RUN: rm -rf %t && mkdir -p %t
; RUN: %python -c "import numpy as np; r = np.random.default_rng(1); a = r.integers(-2**31, 2**31, 64).astype(np.int32); b = r.integers(-2**31, 2**31, 64).astype(np.int32); a[:6] = [0, -1, 2**31-1, -2**31, 5, -2**31]; b[:6] = [1, 1, 1, 1, -2**31, -1]; np.save('%t/a.npy', a); np.save('%t/b.npy', b); np.save('%t/o.npy', np.zeros(256, np.int32))"
; RUN: nabla-run %s --kernel=sat --grid=1 --block=64 --arg=%t/a.npy --arg=%t/b.npy --arg=%t/o.npy --out=%t/out
; RUN: %python -c "import numpy as np; a = np.load('%t/a.npy').astype(np.int64); b = np.load('%t/b.npy').astype(np.int64); o = np.load('%t/out/arg2.npy').reshape(64, 4).astype(np.int64); ua, ub = a %% 2**32, b %% 2**32; e = np.stack([np.maximum(ua - ub, 0), np.minimum(ua + ub, 2**32 - 1), np.clip(a - b, -2**31, 2**31 - 1), np.clip(a + b, -2**31, 2**31 - 1)], 1); o[:, :2] %%= 2**32; print('match', bool((o == e).all()))" | FileCheck %s
; CHECK: match True

target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.usub.sat.i32(i32, i32)
declare i32 @llvm.uadd.sat.i32(i32, i32)
declare i32 @llvm.ssub.sat.i32(i32, i32)
declare i32 @llvm.sadd.sat.i32(i32, i32)
define ptx_kernel void @sat(ptr %a, ptr %b, ptr %o) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %pa = getelementptr i32, ptr %a, i32 %t
  %pb = getelementptr i32, ptr %b, i32 %t
  %x = load i32, ptr %pa
  %y = load i32, ptr %pb
  %r0 = call i32 @llvm.usub.sat.i32(i32 %x, i32 %y)
  %r1 = call i32 @llvm.uadd.sat.i32(i32 %x, i32 %y)
  %r2 = call i32 @llvm.ssub.sat.i32(i32 %x, i32 %y)
  %r3 = call i32 @llvm.sadd.sat.i32(i32 %x, i32 %y)
  %t4 = mul i32 %t, 4
  %p0 = getelementptr i32, ptr %o, i32 %t4
  store i32 %r0, ptr %p0
  %p1 = getelementptr i32, ptr %p0, i32 1
  store i32 %r1, ptr %p1
  %p2 = getelementptr i32, ptr %p0, i32 2
  store i32 %r2, ptr %p2
  %p3 = getelementptr i32, ptr %p0, i32 3
  store i32 %r3, ptr %p3
  ret void
}
