; Warp operations over partial masks (reduce7's second stage: the mask is a
; ballot of the branch's condition, passed on inside the branch) run in
; every lane of the warp: the branch is if-converted (its load guarded, its
; result selected), lanes outside the mask contribute the identity, a
; shuffle from a lane outside the mask reads zero; __activemask becomes a
; ballot of the predicate it runs under. A branch holding one inside a
; data-dependent loop is a located error.
; RUN: nabla-opt %s --nabla-raise-llvm=kernel=second_stage | FileCheck %s
; RUN: nabla-opt %s --nabla-raise-llvm=kernel=active | FileCheck %s --check-prefix=ACTIVE
; RUN: not nabla-opt %s --nabla-raise-llvm=kernel=in_while 2>&1 | FileCheck %s --check-prefix=WHILE

target triple = "nvptx64-nvidia-cuda"

@partial = internal addrspace(3) global [32 x i32] undef, align 4

; CHECK-LABEL: gpu.func @second_stage
; The ballot of the holders (lanes below the warp count).
; CHECK: %[[HOLDS:.*]] = arith.cmpi ult, %{{.*}}, %arg2 : i32
; CHECK: gpu.shuffle xor
; The branch is gone: its load is guarded, the reduction runs in every lane.
; CHECK: %[[LOADED:.*]] = scf.if %[[HOLDS]] -> (i32) {
; CHECK-NEXT: memref.load
; CHECK-NEXT: scf.yield
; CHECK-NEXT: } else {
; CHECK-NEXT: scf.yield %{{.*}} : i32
; CHECK-NEXT: }
; Lanes outside the mask contribute 0.
; CHECK: %[[OWN:.*]] = arith.select %{{.*}}, %[[LOADED]], %{{.*}} : i32
; CHECK: gpu.shuffle xor %[[OWN]]
; CHECK-NOT: scf.if
; The shuffle down over the same mask: a source outside it reads 0.
; CHECK: %[[DOWN:.*]], %{{.*}} = gpu.shuffle down
; CHECK: arith.select %{{.*}}, %{{.*}}, %[[DOWN]] : f32
; The branch's results.
; CHECK: arith.select %[[HOLDS]], %{{.*}}, %{{.*}} : i32
; CHECK: arith.select %[[HOLDS]], %{{.*}}, %{{.*}} : f32
; CHECK-NOT: nabla.partial_mask
; CHECK: gpu.return
define ptx_kernel void @second_stage(ptr addrspace(1) %out, ptr addrspace(1) %fout, i32 %warps) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %holds = icmp ult i32 %t, %warps
  %mask = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %holds)
  br i1 %holds, label %reduce, label %done

reduce:
  %t64 = zext i32 %t to i64
  %slot = getelementptr inbounds [32 x i32], ptr addrspace(3) @partial, i64 0, i64 %t64
  %v = load i32, ptr addrspace(3) %slot, align 4
  %s = call i32 @llvm.nvvm.redux.sync.add(i32 %v, i32 %mask)
  %f = sitofp i32 %v to float
  %g = call float @llvm.nvvm.shfl.sync.down.f32(i32 %mask, float %f, i32 16, i32 31)
  %fs = fadd float %f, %g
  br label %done

done:
  %r = phi i32 [ %s, %reduce ], [ 0, %entry ]
  %rf = phi float [ %fs, %reduce ], [ 0.0, %entry ]
  %o = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %o, align 4
  %fo = getelementptr inbounds float, ptr addrspace(1) %fout, i32 %t
  store float %rf, ptr addrspace(1) %fo, align 4
  ret void
}

; ACTIVE-LABEL: gpu.func @active
; ACTIVE-NOT: nabla.active_lanes
; ACTIVE: %[[POS:.*]] = arith.cmpf ogt
; ACTIVE: %[[BIT:.*]] = arith.extui %[[POS]] : i1 to i32
; ACTIVE: %[[OWN:.*]] = arith.shli %[[BIT]], %{{.*}} : i32
; ACTIVE: gpu.shuffle xor %[[OWN]]
; ACTIVE: scf.if %[[POS]] {
; ACTIVE-NEXT: memref.store
; ACTIVE-NOT: nabla.active_lanes
; ACTIVE: gpu.return
define ptx_kernel void @active(ptr addrspace(1) %x, ptr addrspace(1) %masks) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %xp = getelementptr inbounds float, ptr addrspace(1) %x, i32 %t
  %v = load float, ptr addrspace(1) %xp, align 4
  %pos = fcmp ogt float %v, 0.0
  br i1 %pos, label %then, label %done

then:
  %a = call i32 @llvm.nvvm.activemask()
  %mp = getelementptr inbounds i32, ptr addrspace(1) %masks, i32 %t
  store i32 %a, ptr addrspace(1) %mp, align 4
  br label %done

done:
  ret void
}

; WHILE: .ll:[[# @LINE + 12]]:3: error: cannot make every lane of the warp reach this warp operation over a partial mask (or __activemask): it is inside a 'scf.while' in a branch that only some threads take
define ptx_kernel void @in_while(ptr addrspace(1) %x, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %holds = icmp ult i32 %t, %n
  %mask = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %holds)
  br i1 %holds, label %loop, label %done

loop:
  %i = phi i32 [ %t, %entry ], [ %next, %loop ]
  %xp = getelementptr inbounds i32, ptr addrspace(1) %x, i32 %i
  %v = load i32, ptr addrspace(1) %xp, align 4
  %s = call i32 @llvm.nvvm.redux.sync.add(i32 %v, i32 %mask)
  store i32 %s, ptr addrspace(1) %xp, align 4
  %next = add i32 %i, %s
  %more = icmp ult i32 %next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare i32 @llvm.nvvm.redux.sync.add(i32, i32)
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.activemask()
