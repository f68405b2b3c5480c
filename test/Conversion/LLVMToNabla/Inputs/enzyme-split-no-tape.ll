; __enzyme_augmentfwd without enzyme_tape POINTER: a located error.
target triple = "nvptx64-nvidia-cuda"

@enzyme_dup = external addrspace(1) global i32

define void @sq(ptr %x) {
  %v = load float, ptr %x
  %w = fmul float %v, %v
  store float %w, ptr %x
  ret void
}

define ptx_kernel void @fwd(ptr %x, ptr %dx) {
  %d = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dup to ptr)
  call void (ptr, ...) @__enzyme_augmentfwd(ptr @sq, i32 %d, ptr %x, ptr %dx)
  ret void
}

declare void @__enzyme_augmentfwd(ptr, ...)
