; Enzyme's split mode in a frontend's IR: __enzyme_augmentsize becomes
; nabla.split_tape_bytes, __enzyme_augmentfwd / __enzyme_reverse with
; `enzyme_allocated, SIZE, enzyme_tape, POINTER` before the function's
; arguments become nabla.split_autodiff with the caller's tape (here a byte
; pointer offset by thread id * SIZE); nabla-differentiate replaces the
; size by a constant and calls the halves, which compile for every target.
; A split request without its tape is a located error.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: nabla-opt %s --nabla-raise-llvm --nabla-differentiate | FileCheck %s --check-prefix=DIFF
; RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
; RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
; RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
; RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
; RUN: not nabla-opt %S/Inputs/enzyme-split-no-tape.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=NOTAPE

; CHECK-LABEL: gpu.func @size(
; CHECK: %[[BYTES:.*]] = nabla.split_tape_bytes @sq {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : index
; CHECK: arith.index_cast %[[BYTES]] : index to i64
; CHECK-LABEL: gpu.func @fwd(
; CHECK: nabla.split_autodiff "augmented" @sq(%{{.*}}, %{{.*}}, %{{.*}}) tape(%{{.*}}[%{{.*}}] : memref<?xi8>) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
; CHECK-LABEL: gpu.func @rev(
; CHECK: nabla.split_autodiff "reverse" @sq(

; One loaded float: one word.
; DIFF-LABEL: gpu.func @size(
; DIFF: arith.constant 4 : index
; DIFF-LABEL: gpu.func @fwd(
; DIFF: call @__nabla_aug_sq_dc_tape_i8(
; DIFF-LABEL: gpu.func @rev(
; DIFF: call @__nabla_rev_sq_dc_tape_i8(

; COMPILED-NOT: nabla.
; COMPILED: gpu.binary

; NOTAPE: error: a split-mode Enzyme request needs its tape: enzyme_allocated, SIZE, enzyme_tape, POINTER after the function

target triple = "nvptx64-nvidia-cuda"

@enzyme_dup = external addrspace(1) global i32
@enzyme_allocated = external addrspace(1) global i32
@enzyme_tape = external addrspace(1) global i32

define void @sq(ptr %x) {
  %v = load float, ptr %x
  %w = fmul float %v, %v
  store float %w, ptr %x
  ret void
}

define ptx_kernel void @size(ptr %out) {
  %d = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dup to ptr)
  %n = call i64 (ptr, ...) @__enzyme_augmentsize(ptr @sq, i32 %d)
  store i64 %n, ptr %out
  ret void
}

define ptx_kernel void @fwd(ptr %x, ptr %dx, ptr %tape, i64 %bytes) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = sext i32 %t to i64
  %at = mul i64 %bytes, %t64
  %mine = getelementptr inbounds i8, ptr %tape, i64 %at
  %a = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_allocated to ptr)
  %tp = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_tape to ptr)
  %d = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dup to ptr)
  call void (ptr, ...) @__enzyme_augmentfwd(ptr @sq, i32 %a, i64 %bytes, i32 %tp, ptr %mine, i32 %d, ptr %x, ptr %dx)
  ret void
}

define ptx_kernel void @rev(ptr %x, ptr %dx, ptr %tape, i64 %bytes) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = sext i32 %t to i64
  %at = mul i64 %bytes, %t64
  %mine = getelementptr inbounds i8, ptr %tape, i64 %at
  %a = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_allocated to ptr)
  %tp = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_tape to ptr)
  %d = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dup to ptr)
  call void (ptr, ...) @__enzyme_reverse(ptr @sq, i32 %a, i64 %bytes, i32 %tp, ptr %mine, i32 %d, ptr %x, ptr %dx)
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i64 @__enzyme_augmentsize(ptr, ...)
declare void @__enzyme_augmentfwd(ptr, ...)
declare void @__enzyme_reverse(ptr, ...)
