; Kernels marked the old way (!nvvm.annotations, upgraded by LLVM's parser to
; the ptx_kernel calling convention), Enzyme's dupnoneed marker through an
; address space cast, and a function pointer cast before the request.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s

target triple = "nvptx64-nvidia-cuda"

@enzyme_dupnoneed = external addrspace(1) global i32
declare void @__enzyme_autodiff(ptr, ...)

define void @square(ptr %a) {
  %x = load float, ptr %a
  %y = fmul float %x, %x
  store float %y, ptr %a
  ret void
}

; CHECK-LABEL: gpu.func @k(
; CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[DA:.*]]: memref<?xf32>) kernel
; CHECK: nabla.autodiff @square(%[[A]], %[[DA]], %c0)
; CHECK-SAME: activity = [#nabla.activity<dupnoneed>, #nabla.activity<const>]
define void @k(ptr %a, ptr %da) {
  %m = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dupnoneed to ptr)
  %f = addrspacecast ptr @square to ptr addrspace(1)
  %g = addrspacecast ptr addrspace(1) %f to ptr
  call void (ptr, ...) @__enzyme_autodiff(ptr %g, i32 %m, ptr %a, ptr %da)
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
