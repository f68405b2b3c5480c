; A string argument to device printf (printf.ll checks the error).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%printf_args = type { ptr }

@.str = private unnamed_addr constant [4 x i8] c"%s\0A\00", align 1
@.name = private unnamed_addr constant [5 x i8] c"name\00", align 1

define ptx_kernel void @named() {
  %buffer = alloca %printf_args, align 8
  store ptr @.name, ptr %buffer, align 8
  %r = call i32 @vprintf(ptr @.str, ptr %buffer)
  ret void
}

declare i32 @vprintf(ptr, ptr)
