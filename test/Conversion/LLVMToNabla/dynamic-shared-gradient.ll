; A gradient request through dynamic shared memory (`extern __shared__`):
; the gradient kernel gets an i32 after its own parameters, marked
; nabla.dynamic_shared_memory_bytes, that the launch sets to its dynamic
; shared bytes (reserving twice as many). The primal views the region from
; its start, the shadow from that offset (as many elements), zeroed before
; the request.
; RUN: nabla-opt %s --nabla-raise-llvm | FileCheck %s

; CHECK-LABEL: gpu.func @_Z16grad_scaled_copyPKfPfS1_S1_
; CHECK-SAME: , %[[BYTES:[a-z0-9]+]]: i32 {nabla.dynamic_shared_memory_bytes}) kernel {
; CHECK: %[[OFFSET:.*]] = arith.index_castui %[[BYTES]] : i32 to index
; CHECK: %[[RAW:.*]] = gpu.dynamic_shared_memory
; CHECK: %[[PRIMAL:.*]] = memref.view %[[RAW]][%c0{{.*}}][%{{.*}}] {{.*}} to memref<?xf32, #gpu.address_space<workgroup>>
; CHECK: %[[COUNT:.*]] = arith.divui %[[OFFSET]], %c4
; CHECK: %[[SHADOW:.*]] = memref.view %{{.*}}[%[[OFFSET]]][%[[COUNT]]] {{.*}} to memref<?xf32, #gpu.address_space<workgroup>>
; CHECK: %[[SIZE:.*]] = memref.dim %[[SHADOW]]
; CHECK: scf.for %{{.*}} = %{{.*}} to %[[SIZE]]
; CHECK: memref.store %{{.*}}, %[[SHADOW]]
; CHECK: gpu.barrier
; CHECK: nabla.autodiff @_Z11scaled_copyPKfPf
; CHECK-SAME: %[[PRIMAL]], %[[SHADOW]]

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
@staged = external dso_local local_unnamed_addr addrspace(3) global [0 x float], align 4
@enzyme_dup = external dso_local local_unnamed_addr addrspace(1) global i32, align 4
define dso_local void @_Z11scaled_copyPKfPf(ptr noundef readonly captures(none) %0, ptr noundef writeonly captures(none) %1) {
  %3 = tail call noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %4 = zext nneg i32 %3 to i64
  %5 = getelementptr inbounds nuw float, ptr %0, i64 %4
  %6 = load float, ptr %5, align 4
  %7 = fmul contract float %6, 2.000000e+00
  %8 = getelementptr inbounds nuw float, ptr addrspacecast (ptr addrspace(3) @staged to ptr), i64 %4
  store float %7, ptr %8, align 4
  tail call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %9 = tail call noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %10 = xor i32 %3, -1
  %11 = add nsw i32 %9, %10
  %12 = zext i32 %11 to i64
  %13 = getelementptr inbounds nuw float, ptr addrspacecast (ptr addrspace(3) @staged to ptr), i64 %12
  %14 = load float, ptr %13, align 4
  %15 = getelementptr inbounds nuw float, ptr %1, i64 %4
  store float %14, ptr %15, align 4
  ret void
}
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
define dso_local ptx_kernel void @_Z16grad_scaled_copyPKfPfS1_S1_(ptr noundef %0, ptr noundef %1, ptr noundef %2, ptr noundef %3) local_unnamed_addr {
  %5 = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dup to ptr), align 4
  tail call void @_Z17__enzyme_autodiffIvJiPKfPfiS2_S2_EET_PvDpT0_(ptr noundef nonnull @_Z11scaled_copyPKfPf, i32 noundef %5, ptr noundef %0, ptr noundef %1, i32 noundef %5, ptr noundef %2, ptr noundef %3)
  ret void
}
declare dso_local void @_Z17__enzyme_autodiffIvJiPKfPfiS2_S2_EET_PvDpT0_(ptr noundef, i32 noundef, ptr noundef, ptr noundef, i32 noundef, ptr noundef, ptr noundef) local_unnamed_addr
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
