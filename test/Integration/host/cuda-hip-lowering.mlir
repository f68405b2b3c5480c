// The NVVM and ROCDL pipelines lower host code too: the translation to LLVM
// IR loads the PTX (JIT) or hsaco object and launches through the same mgpu*
// calls, which libnabla_mgpu's CUDA and HIP back ends implement (no GPU
// here: this checks the lowering, not a run).
// REQUIRES: ptxas
// RUN: nabla-opt %s --nabla-to-nvvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefixes=COMMON,NVVM
// RUN: nabla-opt %s --nabla-to-rocdl | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefixes=COMMON,ROCDL

// COMMON-LABEL: define void @main
// COMMON: call ptr @mgpuMemAlloc(i64 16,
// COMMON: call void @mgpuMemcpy(
// COMMON: call void @mgpuLaunchKernel(ptr %{{.*}}, i64 1, i64 1, i64 1, i64 4, i64 1, i64 1, i32 0, ptr %{{.*}}, ptr %{{.*}}, ptr null, i64 5)
// COMMON: call void @mgpuMemFree(
// NVVM: call ptr @mgpuModuleLoadJIT(ptr @main_kernel_binary, i32 2)
// ROCDL: call ptr @mgpuModuleLoad(ptr @main_kernel_binary, i64
func.func @main(%host: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %device = gpu.alloc () : memref<4xf32>
  gpu.memcpy %device, %host : memref<4xf32>, memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %device[%tx] : memref<4xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %device[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.memcpy %host, %device : memref<4xf32>, memref<4xf32>
  gpu.dealloc %device : memref<4xf32>
  return
}
