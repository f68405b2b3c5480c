; nabla-run raises only the launched kernel and what it reaches: another
; kernel of the file that cannot be raised (inline assembly) does not stop it;
; launching that one is the located error. nabla-compile raises everything.
; RUN: nabla-run %s --kernel=good --grid=1 --block=4 --arg=%S/Inputs/four.npy --out=%t | FileCheck %s --allow-empty --check-prefix=LAUNCH
; RUN: not nabla-run %s --kernel=bad --grid=1 --block=4 --arg=%S/Inputs/four.npy 2>&1 | FileCheck %s --check-prefix=BAD
; RUN: not nabla-compile %s --target=spirv --block=4 -o %t.out 2>&1 | FileCheck %s --check-prefix=BAD
; RUN: not nabla-run %s --kernel=missing --grid=1 --block=4 2>&1 | FileCheck %s --check-prefix=MISSING
; RUN: nabla-opt %s --nabla-raise-llvm=kernel=good | FileCheck %s
; RUN: %python -c "import numpy; print(numpy.load('%t/arg0.npy').tolist())" | FileCheck %s --check-prefix=OUT

; LAUNCH-NOT: error
; BAD: only-launched-kernel.ll:23:3: error: cannot raise inline assembly
; MISSING: error: no kernel named 'missing' (kernels: bad, good)
; CHECK: gpu.func @good
; CHECK-NOT: @bad
; OUT: [2.0, 4.0, 6.0, 8.0]

target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @bad(ptr %a) {
  %x = load float, ptr %a
  call void asm sideeffect "trap;", ""()
  ret void
}

define ptx_kernel void @good(ptr %a) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr float, ptr %a, i32 %t
  %x = load float, ptr %p
  %y = fadd float %x, %x
  store float %y, ptr %p
  ret void
}
