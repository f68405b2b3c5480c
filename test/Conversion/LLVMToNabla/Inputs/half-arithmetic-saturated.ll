; Saturating half arithmetic is not recognised: a located error.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @saturated(ptr addrspace(1) %y, ptr addrspace(1) %x) {
  %a = load i16, ptr addrspace(1) %x, align 2
  %s = call i16 asm "{ add.sat.f16 $0,$1,$2; }\0A", "=h,h,h"(i16 %a, i16 %a)
  store i16 %s, ptr addrspace(1) %y, align 2
  ret void
}
