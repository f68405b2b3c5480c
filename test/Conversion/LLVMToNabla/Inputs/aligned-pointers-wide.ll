; An address aligned down to 64 bytes: beyond what the raise takes a
; buffer's start to be aligned to (16), so it stays a located error.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @wide(ptr %out, i64 %i) {
  %p = getelementptr inbounds float, ptr %out, i64 %i
  %a = ptrtoint ptr %p to i64
  %m = and i64 %a, -64
  %q = inttoptr i64 %m to ptr
  store float 1.0, ptr %q, align 4
  ret void
}
