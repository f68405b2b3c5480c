; `p != NULL` / `p == NULL` of a kernel's pointer parameter (through an
; address-space cast too) reads an i32 presence flag the raise adds after
; the kernel's own parameters, marked `nabla.presence` with the buffer's
; index; the runtime sets it from a null argument. A device function's
; tested parameter gets one too, which each call passes: the caller's flag
; for a parameter it passes on (which makes the caller's optional), else 1.
; A null test of a pointer derived from a parameter is a located error.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: nabla-opt %S/Inputs/null-test-device-function.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=DEVICE
; RUN: not nabla-opt %S/Inputs/null-test-derived.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=DERIVED

target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: gpu.func @bias_add
; CHECK-SAME: (%[[Y:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[N:.*]]: i32, %[[FLAG:.*]]: i32 {nabla.presence = 1 : i64})
; CHECK: %[[ABSENT:.*]] = arith.cmpi eq, %[[FLAG]], %c0_i32
; CHECK: scf.if %[[ABSENT]]
; CHECK: } else {
; CHECK: memref.load %[[B]]
define ptx_kernel void @bias_add(ptr %y, ptr %b, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %in = icmp slt i32 %t, %n
  br i1 %in, label %body, label %exit

body:
  %t64 = zext i32 %t to i64
  %py = getelementptr inbounds float, ptr %y, i64 %t64
  %v = load float, ptr %py, align 4
  %global = addrspacecast ptr %b to ptr addrspace(1)
  %none = icmp eq ptr addrspace(1) %global, null
  br i1 %none, label %store, label %add

add:
  %pb = getelementptr inbounds float, ptr %b, i64 %t64
  %bv = load float, ptr %pb, align 4
  %sum = fadd float %v, %bv
  br label %store

store:
  %r = phi float [ %v, %body ], [ %sum, %add ]
  store float %r, ptr %py, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

; DEVICE-LABEL: func.func @read_or_zero
; DEVICE-SAME: (%{{.*}}: memref<?xf32>, %{{.*}}: index, %[[F:.*]]: i32 {nabla.presence = 0 : i64})
; DEVICE: arith.cmpi eq, %[[F]]
; DEVICE-LABEL: gpu.func @k
; DEVICE-SAME: (%[[X:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[KF:.*]]: i32 {nabla.presence = 0 : i64})
; DEVICE: func.call @read_or_zero(%[[X]], %{{.*}}, %[[KF]])
; DERIVED: null-test-derived.ll:8:{{[0-9]+}}: error: a null test of a pointer is raised only for a function's pointer parameters
