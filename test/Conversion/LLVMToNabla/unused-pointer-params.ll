; A device function's pointer parameter that nothing reads or writes (a
; `const int *` an overload ignores, a workspace a variant does not use) is
; dropped from its raised signature: callers and Enzyme requests pass
; nothing for it, whatever their pointer points at. A kernel keeps its own
; (bytes, which any buffer binds).
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s

; CHECK-LABEL: func.func @scale
; CHECK-SAME: (%{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: f32, %{{.*}}: i32)
define void @scale(ptr %x, ptr readnone %unused, float %a, i32 %n) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %p = getelementptr inbounds float, ptr %x, i32 %i
  %v = load float, ptr %p
  %s = fmul float %v, %a
  store float %s, ptr %p
  br label %done
done:
  ret void
}

; CHECK-LABEL: gpu.func @grad_scale
; CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[DX:.*]]: memref<?xf32>, %{{.*}}: memref<?xi8>, %[[A:.*]]: f32, %[[N:.*]]: i32)
; CHECK: nabla.autodiff @scale(%[[X]], %[[DX]], %{{.*}}, %[[A]], %[[N]])
; CHECK-SAME: (memref<?xf32>, memref<?xf32>, index, f32, i32) -> ()
define ptx_kernel void @grad_scale(ptr %x, ptr %dx, ptr %u, float %a, i32 %n) {
  %dup = load i32, ptr @enzyme_dup
  %const = load i32, ptr @enzyme_const
  call void @__enzyme_autodiff(ptr @scale, i32 %dup, ptr %x, ptr %dx, i32 %const, ptr %u, i32 %const, float %a, i32 %const, i32 %n)
  ret void
}

; Passed on to a function that ignores it too: dropped here as well.
; CHECK-LABEL: func.func @forward
; CHECK-SAME: (%{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: f32, %{{.*}}: i32)
; CHECK: call @scale(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32>, index, f32, i32) -> ()
define void @forward(ptr %x, ptr %unused, float %a, i32 %n) {
  call void @scale(ptr %x, ptr %unused, float %a, i32 %n)
  ret void
}

; A float buffer the kernel reads elsewhere, passed where it is unused.
; CHECK-LABEL: gpu.func @typed_elsewhere
; CHECK-SAME: (%[[X2:.*]]: memref<?xf32>, %[[W:.*]]: memref<?xf32>, %{{.*}}: f32, %{{.*}}: i32)
; CHECK: memref.load %[[W]]
; CHECK: call @forward(%[[X2]], %{{.*}}, %{{.*}}, %{{.*}})
define ptx_kernel void @typed_elsewhere(ptr %x, ptr %w, float %a, i32 %n) {
  %w0 = load float, ptr %w
  %b = fmul float %a, %w0
  call void @forward(ptr %x, ptr %w, float %b, i32 %n)
  ret void
}

@enzyme_dup = external global i32
@enzyme_const = external global i32
declare void @__enzyme_autodiff(...)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
