target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
%struct.Params = type { float, i32 }
@enzyme_dup = external dso_local local_unnamed_addr addrspace(1) global i32, align 4
@enzyme_const = external dso_local local_unnamed_addr addrspace(1) global i32, align 4
define dso_local void @_Z1fPKfPf6Params(ptr noundef readonly captures(none) %0, ptr noundef writeonly captures(none) %1, ptr noundef readonly byval(%struct.Params) align 4 captures(none) %2) {
  %4 = tail call noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %5 = getelementptr inbounds nuw i8, ptr %2, i64 4
  %6 = load i32, ptr %5, align 4
  %7 = icmp slt i32 %4, %6
  br i1 %7, label %8, label %16
8:                                                ; preds = %3
  %9 = load float, ptr %2, align 4
  %10 = zext nneg i32 %4 to i64
  %11 = getelementptr inbounds nuw float, ptr %0, i64 %10
  %12 = load float, ptr %11, align 4
  %13 = fmul contract float %9, %12
  %14 = fmul contract float %12, %13
  %15 = getelementptr inbounds nuw float, ptr %1, i64 %10
  store float %14, ptr %15, align 4
  br label %16
16:                                               ; preds = %8, %3
  ret void
}
define dso_local ptx_kernel void @_Z1gPKfPfS1_S1_6Params(ptr noundef %0, ptr noundef %1, ptr noundef %2, ptr noundef %3, ptr noundef readonly byval(%struct.Params) align 4 captures(none) %4) local_unnamed_addr {
  %6 = alloca %struct.Params, align 8
  %7 = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_dup to ptr), align 4
  %8 = load i32, ptr addrspacecast (ptr addrspace(1) @enzyme_const to ptr), align 4
  %9 = load i64, ptr %4, align 4
  store i64 %9, ptr %6, align 8
  tail call void @_Z17__enzyme_autodiffIvJiPKfPfiS2_S2_i6ParamsEET_PvDpT0_(ptr noundef nonnull @_Z1fPKfPf6Params, i32 noundef %7, ptr noundef %0, ptr noundef %1, i32 noundef %7, ptr noundef %2, ptr noundef %3, i32 noundef %7, ptr noundef nonnull byval(%struct.Params) align 4 %6, ptr noundef nonnull byval(%struct.Params) align 4 %6)
  ret void
}
declare dso_local void @_Z17__enzyme_autodiffIvJiPKfPfiS2_S2_i6ParamsEET_PvDpT0_(ptr noundef, i32 noundef, ptr noundef, ptr noundef, i32 noundef, ptr noundef, ptr noundef, i32 noundef, ptr noundef byval(%struct.Params) align 4, ptr noundef byval(%struct.Params) align 4) local_unnamed_addr
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
