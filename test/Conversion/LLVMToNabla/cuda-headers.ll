; What CUDA's headers emit, raised to plain ops: the PTX inline assembly of
; cache-hinted loads and stores (__ldcs, __ldcg on a float4, __stcs, __stwt
; on a float2) becomes memref loads and stores at consecutive elements;
; cooperative groups' unread %reserved_smem_offset_1 is dropped; libdevice's
; reinterpretations, integer functions and rounding or fast variants become
; arith/math ops. Other assembly stays a located error (errors.test.mlir).
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s

; The float4's lanes 0 and 3 are read (1 and 2 are dead), the float2's two
; lanes written at 2i and 2i + 1.
; CHECK-LABEL: gpu.func @hints
; CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
; CHECK-NOT: llvm.inline_asm
; CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
; CHECK: %[[A:.*]] = memref.load %[[X]][%[[I]]]
; CHECK: %[[V:.*]] = arith.muli %[[I]], %c4
; CHECK: %[[V0:.*]] = memref.load %[[X]][%[[V]]]
; CHECK: %[[V3I:.*]] = arith.addi %[[V]], %c3
; CHECK: %[[V3:.*]] = memref.load %[[X]][%[[V3I]]]
; CHECK: memref.store %{{.*}}, %[[Y]][%[[I]]]
; CHECK: %[[W:.*]] = arith.muli %[[I]], %c2
; CHECK: memref.store %[[V0]], %[[Y]][%[[W]]]
; CHECK: %[[W1:.*]] = arith.addi %[[W]], %c1
; CHECK: memref.store %[[V3]], %[[Y]][%[[W1]]]
; CHECK: gpu.return

; CHECK-LABEL: gpu.func @library
; CHECK: arith.bitcast %{{.*}} : f32 to i32
; CHECK: arith.minui
; CHECK: arith.shli
; CHECK: arith.shrsi
; CHECK: arith.muli
; CHECK: arith.maxnumf
; CHECK: arith.minnumf
; CHECK: math.exp
; CHECK: arith.divf
; CHECK: math.cttz
; CHECK: arith.remf
; CHECK: arith.bitcast %{{.*}} : i32 to f32

target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @hints(ptr %x, ptr %y) {
  %smem = call i64 asm "{\0A\09 .reg .u32 start;\0A\09 mov.u32 start, %reserved_smem_offset_1;\0A\09 cvt.u64.u32 $0, start;\0A\09}", "=l"()
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %p = getelementptr float, ptr %x, i64 %i
  %a = call float asm "ld.global.cs.f32 $0, [$1];", "=f,l"(ptr %p)
  %q = getelementptr <4 x float>, ptr %x, i64 %i
  %v = call { float, float, float, float } asm "ld.global.cg.v4.f32 {$0,$1,$2,$3}, [$4];", "=f,=f,=f,=f,l"(ptr %q)
  %v0 = extractvalue { float, float, float, float } %v, 0
  %v3 = extractvalue { float, float, float, float } %v, 3
  %s = fadd float %a, %v0
  %s2 = fadd float %s, %v3
  %o = getelementptr float, ptr %y, i64 %i
  call void asm sideeffect "st.global.cs.f32 [$0], $1;", "l,f,~{memory}"(ptr %o, float %s2)
  %o2 = getelementptr <2 x float>, ptr %y, i64 %i
  call void asm sideeffect "st.global.wt.v2.f32 [$0], {$1,$2};", "l,f,f,~{memory}"(ptr %o2, float %v0, float %v3)
  ret void
}

declare i32 @__nv_float_as_int(float)
declare float @__nv_int_as_float(i32)
declare i32 @__nv_umin(i32, i32)
declare i32 @__nv_mul24(i32, i32)
declare float @__nv_saturatef(float)
declare float @__nv_fast_expf(float)
declare float @__nv_fdividef(float, float)
declare i32 @__nv_ffs(i32)
declare float @__nv_fmodf(float, float)

define ptx_kernel void @library(ptr %x, ptr %n) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr float, ptr %x, i32 %t
  %f = load float, ptr %p
  %bits = call i32 @__nv_float_as_int(float %f)
  %m = call i32 @__nv_umin(i32 %bits, i32 %t)
  %m24 = call i32 @__nv_mul24(i32 %m, i32 %t)
  %sat = call float @__nv_saturatef(float %f)
  %e = call float @__nv_fast_expf(float %sat)
  %d = call float @__nv_fdividef(float %e, float %f)
  %first = call i32 @__nv_ffs(i32 %m24)
  %r = call float @__nv_fmodf(float %d, float 3.0)
  %back = call float @__nv_int_as_float(i32 %first)
  %sum = fadd float %r, %back
  store float %sum, ptr %p
  ret void
}

; Conversions with a rounding mode: float to integer rounds as the mode says
; first (rd: floor, ru: ceil, rn: to even, rz: the truncating conversion);
; to a float rounds to nearest whatever the mode.
; CHECK-LABEL: gpu.func @conversions
; CHECK: %[[FL:.*]] = math.floor %{{.*}} : f32
; CHECK: arith.fptosi %[[FL]] : f32 to i32
; CHECK: %[[CE:.*]] = math.ceil %{{.*}} : f32
; CHECK: arith.fptoui %[[CE]] : f32 to i32
; CHECK: %[[RE:.*]] = math.roundeven %{{.*}} : f64
; CHECK: arith.fptosi %[[RE]] : f64 to i64
; CHECK: arith.fptosi %{{.*}} : f32 to i32
; CHECK: arith.sitofp %{{.*}} : i32 to f32
; The unsigned i64 to double to float pair folds into one conversion.
; CHECK: arith.uitofp %{{.*}} : i64 to f32
define ptx_kernel void @conversions(ptr %x, ptr %d, ptr %i, ptr %l, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %px = getelementptr inbounds float, ptr %x, i64 %t64
  %v = load float, ptr %px, align 4
  %pd = getelementptr inbounds double, ptr %d, i64 %t64
  %w = load double, ptr %pd, align 8
  %a = call i32 @__nv_float2int_rd(float %v)
  %b = call i32 @__nv_float2uint_ru(float %v)
  %c = call i64 @__nv_double2ll_rn(double %w)
  %e = call i32 @__nv_float2int_rz(float %v)
  %s1 = add i32 %a, %b
  %s2 = add i32 %s1, %e
  %pi = getelementptr inbounds i32, ptr %i, i64 %t64
  store i32 %s2, ptr %pi, align 4
  %pl = getelementptr inbounds i64, ptr %l, i64 %t64
  store i64 %c, ptr %pl, align 8
  %f = call float @__nv_int2float_ru(i32 %s2)
  %g = call double @__nv_ull2double_rd(i64 %c)
  %h = call float @__nv_double2float_rz(double %g)
  %sum = fadd float %f, %h
  %py = getelementptr inbounds float, ptr %y, i64 %t64
  store float %sum, ptr %py, align 4
  ret void
}
declare i32 @__nv_float2int_rd(float)
declare i32 @__nv_float2uint_ru(float)
declare i64 @__nv_double2ll_rn(double)
declare i32 @__nv_float2int_rz(float)
declare float @__nv_int2float_ru(i32)
declare double @__nv_ull2double_rd(i64)
declare float @__nv_double2float_rz(double)
