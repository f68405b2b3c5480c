// Bad host programs: a located error at compile time, or a message from
// libnabla_mgpu and exit status 1 at run time, never a crash or a hang.
// RUN: split-file %s %t
// RUN: %expect_exit 1 nabla-opt %t/unknown-kernel.mlir --nabla-to-spirv 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: %expect_exit 1 nabla-run %t/unknown-kernel.mlir --entry=main 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: %expect_exit 1 nabla-run %t/block-too-large.mlir --entry=main 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: nabla-opt %t/block-too-large.mlir --nabla-to-spirv -o %t/large.mlir
// RUN: %expect_exit 1 mlir-runner %t/large.mlir -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: %expect_exit 1 nabla-opt %t/host-op.mlir --nabla-to-spirv 2>&1 | FileCheck %s --check-prefix=HOSTOP
// RUN: %expect_exit 1 nabla-opt %t/vector-argument.mlir --nabla-to-spirv 2>&1 | FileCheck %s --check-prefix=VECTOR
// RUN: %expect_exit 2 nabla-run %t/host-op.mlir --entry= 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: %expect_exit 1 nabla-run %t/host-op.mlir --entry=nowhere 2>&1 | FileCheck %s --check-prefix=ENTRY

// UNKNOWN: unknown-kernel.mlir:6:5: error: 'gpu.launch_func' op kernel function '@kernels::@missing' is undefined
// LARGE: nabla_mgpu: error: kernel 'main_kernel' launched with blocks of 4096,1,1 threads, more than '{{.*}}' allows
// HOSTOP: host-op.mlir:5:3: error: 'linalg.fill' op cannot be lowered in host code for the spirv target
// VECTOR: vector-argument.mlir:3:5: error: 'gpu.func' op parameter #0 has type 'memref<4xvector<4xf32>>', which no target passes to a kernel
// USAGE: nabla-run: --entry needs a function name
// ENTRY: error: '{{.*}}host-op.mlir' has no function 'nowhere'

//--- unknown-kernel.mlir
module attributes {gpu.container_module} {
  gpu.module @kernels {
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@missing blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

//--- block-too-large.mlir
// 4096 threads per block, from memref.dim: more than Vulkan devices allow.
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buffer = memref.alloc() : memref<4096xf32>
  %dynamic = memref.cast %buffer : memref<4096xf32> to memref<?xf32>
  %n = memref.dim %dynamic, %c0 : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %n, %sy = %c1, %sz = %c1) {
    %v = arith.constant 1.0 : f32
    memref.store %v, %buffer[%tx] : memref<4096xf32>
    gpu.terminator
  }
  return
}

//--- host-op.mlir
// The host lowering has no linalg conversion.
func.func @main() {
  %m = memref.alloc() : memref<4xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<4xf32>)
  gpu.wait
  return
}

//--- vector-argument.mlir
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xvector<4xf32>>) kernel {
      gpu.return
    }
  }
  func.func @main(%a: memref<4xvector<4xf32>>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xvector<4xf32>>)
    return
  }
}
