; A null test of a pointer derived from a parameter (an offset into it):
; null-tests.ll checks the located error.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr %x, ptr %y) {
entry:
  %q = getelementptr float, ptr %x, i64 1
  %none = icmp eq ptr %q, null
  %v = select i1 %none, float 0.0, float 1.0
  store float %v, ptr %y, align 4
  ret void
}
