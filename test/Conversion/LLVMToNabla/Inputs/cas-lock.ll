; A spin lock (atomicCAS(lock, 0, 1) until it succeeds) is no float atomic:
; cas-loops.ll checks it stays a located error.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @lock(ptr %l) {
entry:
  br label %spin

spin:
  %pair = cmpxchg ptr %l, i32 0, i32 1 seq_cst seq_cst, align 4
  %ok = extractvalue { i32, i1 } %pair, 1
  br i1 %ok, label %exit, label %spin

exit:
  ret void
}
