; CUDA: a Julia-style device array {float *, long} passed by value to the function a
; request differentiates, enzyme_dup with a shadow struct (struct-args.ll).
source_filename = "dup.cu"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
%struct.DeviceArray = type { ptr, i64 }
@enzyme_dup = external dso_local local_unnamed_addr addrspace(1) global i32, align 4
define dso_local void @_Z1f11DeviceArrayS_(ptr noundef readonly byval(%struct.DeviceArray) align 8 captures(none) %0, ptr noundef readonly byval(%struct.DeviceArray) align 8 captures(none) %1) {
  %3 = tail call noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %4 = zext nneg i32 %3 to i64
  %5 = getelementptr inbounds nuw i8, ptr %1, i64 8
  %6 = load i64, ptr %5, align 8
  %7 = icmp sgt i64 %6, %4
  br i1 %7, label %8, label %15
8:                                                ; preds = %2
  %9 = load ptr, ptr %0, align 8
  %10 = getelementptr inbounds nuw float, ptr %9, i64 %4
  %11 = load float, ptr %10, align 4
  %12 = fmul contract float %11, %11
  %13 = load ptr, ptr %1, align 8
  %14 = getelementptr inbounds nuw float, ptr %13, i64 %4
  store float %12, ptr %14, align 4
  br label %15
15:                                               ; preds = %8, %2
  ret void
}
define dso_local ptx_kernel void @_Z1gPfS_S_S_l(ptr noundef %0, ptr noundef %1, ptr noundef %2, ptr noundef %3, i64 noundef %4) local_unnamed_addr {
  %6 = alloca %struct.DeviceArray, align 8
  %7 = alloca %struct.DeviceArray, align 8
  %8 = alloca %struct.DeviceArray, align 8
  %9 = alloca %struct.DeviceArray, align 8
  %10 = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dup to ptr), align 4
  store ptr %0, ptr %6, align 8
  %11 = getelementptr inbounds nuw i8, ptr %6, i64 8
  store i64 %4, ptr %11, align 8
  store ptr %1, ptr %7, align 8
  %12 = getelementptr inbounds nuw i8, ptr %7, i64 8
  store i64 %4, ptr %12, align 8
  store ptr %2, ptr %8, align 8
  %13 = getelementptr inbounds nuw i8, ptr %8, i64 8
  store i64 %4, ptr %13, align 8
  store ptr %3, ptr %9, align 8
  %14 = getelementptr inbounds nuw i8, ptr %9, i64 8
  store i64 %4, ptr %14, align 8
  tail call void @_Z17__enzyme_autodiffIvJi11DeviceArrayS0_iS0_S0_EET_PvDpT0_(ptr noundef nonnull @_Z1f11DeviceArrayS_, i32 noundef %10, ptr noundef nonnull byval(%struct.DeviceArray) align 8 %6, ptr noundef nonnull byval(%struct.DeviceArray) align 8 %7, i32 noundef %10, ptr noundef nonnull byval(%struct.DeviceArray) align 8 %8, ptr noundef nonnull byval(%struct.DeviceArray) align 8 %9)
  ret void
}
declare dso_local void @_Z17__enzyme_autodiffIvJi11DeviceArrayS0_iS0_S0_EET_PvDpT0_(ptr noundef, i32 noundef, ptr noundef byval(%struct.DeviceArray) align 8, ptr noundef byval(%struct.DeviceArray) align 8, i32 noundef, ptr noundef byval(%struct.DeviceArray) align 8, ptr noundef byval(%struct.DeviceArray) align 8) local_unnamed_addr
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
