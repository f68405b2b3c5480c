; The seed's kernels as Julia's GPUCompiler/CUDA.jl stack emits them (written
; by hand: Julia is not available here): a CuDeviceArray{Float32,1} passed by
; value as a first-class aggregate {data, maxsize, dims, length}, 1-based
; Int64 indices, a bounds check whose failure reports an exception and traps,
; and a host object (the weights table `Main.weights`) referenced
; symbolically: the v2 convention, an external declaration behind an address
; space cast, named in !nabla.gv_to_value.
;
;   mul(A, W) = A[i] = A[i]^2 * W[mod1(i, 4)] for every thread i <= length(A)
;   mul_kernel(A)       runs it
;   grad_mul_kernel(A, dA) runs Enzyme.autodiff_deferred of it per thread
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@"jl_global#12889" = external constant [4 x float]
@"jl_global#12890" = external global i8
@enzyme_dup = external global i32
@enzyme_const = external global i32

declare void @gpu_report_exception(i64)
declare void @llvm.trap()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare void @__enzyme_autodiff(ptr, ...)

define internal void @julia_mul_1205(ptr addrspace(1) %data, i64 %len) {
top:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t = zext i32 %tid to i64
  %b = zext i32 %ctaid to i64
  %d = zext i32 %ntid to i64
  %bd = mul i64 %b, %d
  %i0 = add i64 %bd, %t
  %i = add i64 %i0, 1
  %inside = icmp sle i64 %i, %len
  br i1 %inside, label %L1, label %done

L1:
  %k0 = add i64 %i, -1
  %k1 = srem i64 %k0, 4
  %k = add i64 %k1, 1
  %inb = icmp ule i64 %k, 4
  br i1 %inb, label %L2, label %oob

oob:
  call void @gpu_report_exception(i64 ptrtoint (ptr addrspace(1) addrspacecast (ptr @"jl_global#12890" to ptr addrspace(1)) to i64))
  call void @llvm.trap()
  unreachable

L2:
  %w.base = addrspacecast ptr @"jl_global#12889" to ptr addrspace(1)
  %w.off = add i64 %k, -1
  %w.ptr = getelementptr inbounds float, ptr addrspace(1) %w.base, i64 %w.off
  %w = load float, ptr addrspace(1) %w.ptr, align 4
  %a.ptr = getelementptr inbounds float, ptr addrspace(1) %data, i64 %k0
  %a = load float, ptr addrspace(1) %a.ptr, align 4
  %a2 = fmul float %a, %a
  %r = fmul float %a2, %w
  store float %r, ptr addrspace(1) %a.ptr, align 4
  br label %done

done:
  ret void
}

define ptx_kernel void @julia_mul_kernel_1203({ ptr addrspace(1), i64, [1 x i64], i64 } %A) {
top:
  %data = extractvalue { ptr addrspace(1), i64, [1 x i64], i64 } %A, 0
  %len = extractvalue { ptr addrspace(1), i64, [1 x i64], i64 } %A, 3
  call void @julia_mul_1205(ptr addrspace(1) %data, i64 %len)
  ret void
}

define ptx_kernel void @julia_grad_mul_kernel_1207({ ptr addrspace(1), i64, [1 x i64], i64 } %A, { ptr addrspace(1), i64, [1 x i64], i64 } %dA) {
top:
  %data = extractvalue { ptr addrspace(1), i64, [1 x i64], i64 } %A, 0
  %ddata = extractvalue { ptr addrspace(1), i64, [1 x i64], i64 } %dA, 0
  %len = extractvalue { ptr addrspace(1), i64, [1 x i64], i64 } %A, 3
  %dup = load i32, ptr @enzyme_dup, align 4
  %const = load i32, ptr @enzyme_const, align 4
  call void (ptr, ...) @__enzyme_autodiff(ptr @julia_mul_1205, i32 %dup, ptr addrspace(1) %data, ptr addrspace(1) %ddata, i32 %const, i64 %len)
  ret void
}

!nabla.gv_to_value = !{!0}
!0 = !{!"jl_global#12889", !"Main.weights"}
