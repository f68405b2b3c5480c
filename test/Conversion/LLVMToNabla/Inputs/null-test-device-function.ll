; A device function testing its own pointer parameter for null (not
; inlined), called with a kernel parameter: null-tests.ll checks the flags.
target triple = "nvptx64-nvidia-cuda"

define internal float @read_or_zero(ptr %p) noinline {
entry:
  %none = icmp eq ptr %p, null
  br i1 %none, label %zero, label %read

read:
  %v = load float, ptr %p, align 4
  ret float %v

zero:
  ret float 0.0
}

define ptx_kernel void @k(ptr %x, ptr %y) {
entry:
  %v = call float @read_or_zero(ptr %x)
  store float %v, ptr %y, align 4
  ret void
}
