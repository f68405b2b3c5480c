; Compare-exchange loops that apply a float op to a value's bits (CUDA's
; atomicMax on floats, the programming guide's atomicAdd on doubles) raise
; to the atomic they implement, on the float; the buffer, read as integers
; by the loop, is typed as float. The loop written `while (old !=
; assumed)`, its first attempt before it, is the same atomic; the old value
; it returns is the atomic's. Another compare-exchange (a spin lock) stays a
; located error.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s
; RUN: not nabla-opt %S/Inputs/cas-lock.ll --nabla-raise-llvm 2>&1 | FileCheck %s --check-prefix=LOCK

target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: gpu.func @amax
; CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[M:.*]]: memref<?xf32>)
; CHECK-NOT: cmpxchg
; CHECK: %[[V:.*]] = memref.load %[[X]]
; CHECK: memref.atomic_rmw maxnumf %[[V]], %[[M]][%{{.*}}] : (f32, memref<?xf32>) -> f32
; CHECK-NOT: scf.while
; CHECK: gpu.return
define ptx_kernel void @amax(ptr %x, ptr %m) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds float, ptr %x, i64 %t64
  %v = load float, ptr %p, align 4
  %first = load i32, ptr %m, align 4
  br label %loop

loop:
  %assumed = phi i32 [ %first, %entry ], [ %old, %loop ]
  %f = call float @__nv_int_as_float(i32 %assumed)
  %max = call float @__nv_fmaxf(float %v, float %f)
  %bits = call i32 @__nv_float_as_int(float %max)
  %pair = cmpxchg ptr %m, i32 %assumed, i32 %bits seq_cst seq_cst, align 4
  %old = extractvalue { i32, i1 } %pair, 0
  %done = icmp eq i32 %assumed, %old
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

; The success flag as the exit test, bitcasts instead of libdevice, fadd.
; CHECK-LABEL: gpu.func @dadd
; CHECK-SAME: (%[[S:.*]]: memref<?xf64>, %[[D:.*]]: f64)
; CHECK: memref.atomic_rmw addf %[[D]], %[[S]][%{{.*}}] : (f64, memref<?xf64>) -> f64
; CHECK-NOT: scf.while
define ptx_kernel void @dadd(ptr %s, double %d) {
entry:
  %first = load i64, ptr %s, align 8
  br label %loop

loop:
  %assumed = phi i64 [ %first, %entry ], [ %old, %loop ]
  %f = bitcast i64 %assumed to double
  %sum = fadd double %f, %d
  %bits = bitcast double %sum to i64
  %pair = cmpxchg ptr %s, i64 %assumed, i64 %bits seq_cst seq_cst, align 8
  %old = extractvalue { i64, i1 } %pair, 0
  %ok = extractvalue { i64, i1 } %pair, 1
  br i1 %ok, label %exit, label %loop

exit:
  ret void
}

; CHECK-LABEL: gpu.func @amin_peeled
; CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[M:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
; CHECK-NOT: cmpxchg
; CHECK: %[[V:.*]] = memref.load %[[X]]
; CHECK: %[[OLD:.*]] = memref.atomic_rmw minnumf %[[V]], %[[M]][%{{.*}}] : (f32, memref<?xf32>) -> f32
; CHECK-NOT: scf.while
; CHECK: memref.store %[[OLD]], %[[Y]]
define ptx_kernel void @amin_peeled(ptr %x, ptr %m, ptr %y) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds float, ptr %x, i64 %t64
  %v = load float, ptr %p, align 4
  %guess = load i32, ptr %m, align 4
  %g = call float @__nv_int_as_float(i32 %guess)
  %min0 = call float @__nv_fminf(float %v, float %g)
  %bits0 = call i32 @__nv_float_as_int(float %min0)
  %pair0 = cmpxchg ptr %m, i32 %guess, i32 %bits0 seq_cst seq_cst, align 4
  %old0 = extractvalue { i32, i1 } %pair0, 0
  %ok0 = extractvalue { i32, i1 } %pair0, 1
  br i1 %ok0, label %exit, label %retry

retry:
  %assumed = phi i32 [ %old, %retry ], [ %old0, %entry ]
  %f = call float @__nv_int_as_float(i32 %assumed)
  %min = call float @__nv_fminf(float %v, float %f)
  %bits = call i32 @__nv_float_as_int(float %min)
  %pair = cmpxchg ptr %m, i32 %assumed, i32 %bits seq_cst seq_cst, align 4
  %old = extractvalue { i32, i1 } %pair, 0
  %ok = extractvalue { i32, i1 } %pair, 1
  br i1 %ok, label %exit, label %retry

exit:
  %last = phi i32 [ %old0, %entry ], [ %old, %retry ]
  %lastf = call float @__nv_int_as_float(i32 %last)
  %q = getelementptr inbounds float, ptr %y, i64 %t64
  store float %lastf, ptr %q, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @__nv_int_as_float(i32)
declare i32 @__nv_float_as_int(float)
declare float @__nv_fmaxf(float, float)
; LOCK: cas-lock.ll:10:3: error: cannot raise this compare-exchange (atomicCAS): only a loop that applies a float add, subtract, fmaxf or fminf to a value's bits
declare float @__nv_fminf(float, float)
