; An integer atomic on an object otherwise accessed as floats of its width
; (llm.c's layer norm backward keeps its finished-blocks counter in the
; float scratch buffer): the object is viewed as the integer, the float
; accesses reinterpret its elements, and the atomic stays an integer
; atomic (the buffer takes int32: the floats as their bits). Run on the
; default device: each of 64 threads stores i / 2 and counts itself in the
; word after the floats.
; RUN: rm -rf %t && mkdir -p %t
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: %python -c "import numpy as np; np.save('%t/s.npy', np.zeros(65, np.int32))"
; RUN: nabla-run %s --kernel=count_in_scratch --grid=1 --block=64 --arg=%t/s.npy --arg=i32:64 --out=%t/o
; RUN: %python -c "import numpy as np; s = np.load('%t/o/arg0.npy'); print('floats', bool((s[:64].view(np.float32) == np.arange(64) / 2).all()), 'count', int(s[64]))" | FileCheck %s --check-prefix=OUT

; CHECK-LABEL: gpu.func @count_in_scratch
; CHECK-SAME: (%[[S:.*]]: memref<?xi32>, %{{.*}}: i32)
; CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
; CHECK: memref.store %[[BITS]], %[[S]]
; CHECK: memref.atomic_rmw addi %{{.*}}, %[[S]][%{{.*}}] : (i32, memref<?xi32>) -> i32
; OUT: floats True count 64
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @count_in_scratch(ptr %scratch, i32 %n) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %f = uitofp i32 %t to float
  %half = fmul float %f, 5.000000e-01
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds float, ptr %scratch, i64 %t64
  store float %half, ptr %p, align 4
  %n64 = zext i32 %n to i64
  %flag = getelementptr inbounds float, ptr %scratch, i64 %n64
  %old = atomicrmw add ptr %flag, i32 1 monotonic, align 4
  ret void
}
