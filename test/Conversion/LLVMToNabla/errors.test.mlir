// What --nabla-raise-llvm cannot raise: a located error (file:line:col of
// the .ll instruction) naming the construct and the reason, exit 1, never a
// crash or a silently wrong kernel.
// RUN: split-file %s %t
// RUN: not nabla-opt %t/asm.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=ASM
// RUN: not nabla-opt %t/indirect.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=INDIRECT
// RUN: not nabla-opt %t/punning.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=PUN
// RUN: not nabla-opt %t/intrinsic.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=INTRINSIC
// RUN: not nabla-opt %t/recursion.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=RECURSION
// RUN: not nabla-opt %t/recursion_local.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=RECURSION-LOCAL
// RUN: not nabla-opt %t/external.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=EXTERNAL
// RUN: not nabla-opt %t/libdevice.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=LIBDEVICE
// RUN: not nabla-opt %t/mangled.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=MANGLED
// RUN: nabla-opt %t/nulltest.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=NULLTEST
// RUN: not nabla-opt %t/loaded.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=LOADED
// RUN: not nabla-opt %t/baked.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=BAKED
// RUN: not nabla-opt %t/phi.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=PHI
// RUN: not nabla-opt %t/enzyme.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=ENZYME
// RUN: not nabla-opt %t/enzyme_kernel.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=ENZYME-KERNEL
// RUN: not nabla-opt %t/syntax.ll 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not nabla-opt %t/verifier.ll 2>&1 | FileCheck %s --check-prefix=VERIFIER
// RUN: %python -c "open('%t/garbage.bc', 'wb').write(b'BC\xc0\xde' + bytes(12))"
// RUN: not nabla-opt %t/garbage.bc 2>&1 | FileCheck %s --check-prefix=BITCODE
// RUN: not nabla-run %t/asm.ll --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=ASM
// RUN: not nabla-compile %t/asm.ll --target=nvvm -o %t/out 2>&1 | FileCheck %s --check-prefix=ASM

// ASM: asm.ll:4:3: error: cannot raise inline assembly
// INDIRECT: indirect.ll:2:3: error: cannot raise an indirect call (call a function by name)
// PUN: punning.ll:4:3: error: cannot raise an atomic of 'i32' on an object also accessed as another type
// INTRINSIC: intrinsic.ll:2:3: error: cannot raise 'nvvm.read.ptx.sreg.clock' (an intrinsic Nabla does not know)
// RECURSION: recursion.ll:2:3: error: cannot raise the recursive function @f
// Recursion through calls the raise inlines (a local struct passed by
// reference, called twice per level): refused before inlining, which doubled
// the calls each round until memory ran out.
// RECURSION-LOCAL: recursion_local.ll:18:3: error: cannot raise a recursive call of a function that takes or returns a struct or is given local or workgroup memory
// EXTERNAL: external.ll:4:3: error: cannot raise a call of the external function @my_helper
// LIBDEVICE: libdevice.ll:4:3: error: cannot raise a call of CUDA's device function 'frobnicatef' (or '__frobnicatef'; libdevice's @__nv_frobnicatef)
// MANGLED: mangled.ll:4:3: error: cannot raise a call of the device function 'helper(float, int)' (@_Z6helperfi, which has no body in this module)
// A kernel's own pointer tested for null (never read): its presence flag.
// NULLTEST: gpu.func @k(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi8>, %[[FLAG:.*]]: i32 {nabla.presence = 1 : i64})
// NULLTEST: arith.cmpi eq, %[[FLAG]]
// LOADED: loaded.ll:2:3: error: a pointer loaded from memory cannot be raised
// BAKED: baked.ll:2:3: error: cannot raise the baked address 4096: list it with its key and size in !nabla.address_map
// PHI: phi.ll:13:3: error: a pointer that chooses between two different objects (a select or a phi) cannot be raised here: only loads, stores and atomics through one are
// ENZYME: enzyme.ll:6:3: error: this Enzyme request passes 1 arguments, @f takes 2
// A __global__ function with __shared__ memory differentiated from another
// kernel (it said "expects 3 activities, got 4" before).
// ENZYME-KERNEL: enzyme_kernel.ll:13:3: error: cannot differentiate the __global__ function @sq inside another kernel: its __shared__ memory belongs to its own launch; move its body into a __device__ function that both kernels call
// SYNTAX: syntax.ll:3:11: error: invalid LLVM IR: expected value token
// VERIFIER: error: invalid LLVM IR (verifier): Instruction does not dominate all uses!
// BITCODE: error: invalid LLVM bitcode

//--- asm.ll
target triple = "nvptx64-nvidia-cuda"
define ptx_kernel void @k(ptr %a) {
  %x = load float, ptr %a
  call void asm sideeffect "trap;", ""()
  ret void
}
//--- indirect.ll
define ptx_kernel void @k(ptr %f) {
  call void %f()
  ret void
}
//--- punning.ll
define ptx_kernel void @k(ptr %a) {
  %x = load i16, ptr %a
  %p = getelementptr i8, ptr %a, i64 4
  %y = atomicrmw add ptr %p, i32 1 monotonic
  ret void
}
//--- intrinsic.ll
define ptx_kernel void @k(ptr %a) {
  %c = call i32 @llvm.nvvm.read.ptx.sreg.clock()
  store i32 %c, ptr %a
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.clock()
//--- recursion.ll
define void @f(ptr %a) {
  call void @f(ptr %a)
  ret void
}
define ptx_kernel void @k(ptr %a) {
  call void @f(ptr %a)
  ret void
}
//--- recursion_local.ll
define void @g(ptr %s, i32 %d) {
  %stop = icmp slt i32 %d, 1
  br i1 %stop, label %leaf, label %deeper
deeper:
  %e = add i32 %d, -1
  call void @g(ptr %s, i32 %e)
  call void @g(ptr %s, i32 %e)
  ret void
leaf:
  %v = load float, ptr %s
  %w = fadd float %v, 1.0
  store float %w, ptr %s
  ret void
}
define ptx_kernel void @k(ptr %a, i32 %n) {
  %s = alloca [5 x float]
  store float 0.0, ptr %s
  call void @g(ptr %s, i32 %n)
  %r = load float, ptr %s
  store float %r, ptr %a
  ret void
}
//--- external.ll
declare float @my_helper(float)
define ptx_kernel void @k(ptr %a) {
  %x = load float, ptr %a
  %y = call float @my_helper(float %x)
  store float %y, ptr %a
  ret void
}
//--- libdevice.ll
declare float @__nv_frobnicatef(float)
define ptx_kernel void @k(ptr %a) {
  %x = load float, ptr %a
  %y = call float @__nv_frobnicatef(float %x)
  store float %y, ptr %a
  ret void
}
//--- mangled.ll
declare float @_Z6helperfi(float, i32)
define ptx_kernel void @k(ptr %a) {
  %x = load float, ptr %a
  %y = call float @_Z6helperfi(float %x, i32 1)
  store float %y, ptr %a
  ret void
}
//--- nulltest.ll
define ptx_kernel void @k(ptr %a, ptr %bias) {
  %none = icmp eq ptr %bias, null
  %x = load float, ptr %a
  %b = select i1 %none, float 0.0, float 1.0
  %y = fadd float %x, %b
  store float %y, ptr %a
  ret void
}
//--- loaded.ll
define ptx_kernel void @k(ptr %pp) {
  %p = load ptr, ptr %pp
  %x = load float, ptr %p
  ret void
}
//--- baked.ll
define ptx_kernel void @k() {
  %p = inttoptr i64 4096 to ptr
  %x = load float, ptr %p
  ret void
}
//--- phi.ll
define void @g(ptr %q) noinline {
  store float 1.0, ptr %q
  ret void
}
define ptx_kernel void @k(ptr %a, ptr %b, i1 %c) {
entry:
  br i1 %c, label %l, label %r
l:
  br label %m
r:
  br label %m
m:
  %p = phi ptr [ %a, %l ], [ %b, %r ]
  call void @g(ptr %p)
  ret void
}
//--- enzyme.ll
@enzyme_dup = external global i32
declare void @__enzyme_autodiff(ptr, ...)
define void @f(ptr %a, i32 %n) { ret void }
define ptx_kernel void @k(ptr %a, ptr %da) {
  %d = load i32, ptr @enzyme_dup
  call void (ptr, ...) @__enzyme_autodiff(ptr @f, i32 %d, ptr %a, ptr %da)
  ret void
}
//--- enzyme_kernel.ll
@enzyme_dup = external global i32
@s = internal addrspace(3) global [64 x float] undef, align 4
declare void @__enzyme_autodiff(ptr, ...)
define ptx_kernel void @sq(ptr %x) {
  %v = load float, ptr %x
  store float %v, ptr addrspace(3) @s
  %w = load float, ptr addrspace(3) @s
  store float %w, ptr %x
  ret void
}
define ptx_kernel void @k(ptr %x, ptr %dx) {
  %d = load i32, ptr @enzyme_dup
  call void (ptr, ...) @__enzyme_autodiff(ptr @sq, i32 %d, ptr %x, ptr %dx)
  ret void
}
//--- syntax.ll
define ptx_kernel void @k(ptr %a) {
  %x = load float, ptr %a
  store %x, ptr %a
  ret void
}
//--- verifier.ll
define ptx_kernel void @k(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  %x = add i32 1, 2
  br label %b
b:
  %y = add i32 %x, 1
  ret void
}
