// opt-level on the SPIR-V path: 0 keeps the kernel's own operations (two
// identical adds stay two OpFAdd), 2 simplifies before and after conversion
// (CSE leaves one).
// RUN: nabla-compile %s --target=spirv --block=64 --opt-level=0 -o %t.o0 && spirv-dis %t.o0/kernels.spv | FileCheck %s --check-prefix=O0
// RUN: nabla-compile %s --target=spirv --block=64 --opt-level=2 -o %t.o2 && spirv-dis %t.o2/kernels.spv | FileCheck %s --check-prefix=O2
// RUN: spirv-val --target-env vulkan1.1 %t.o0/kernels.spv
// O0-COUNT-2: OpFAdd
// O0-NOT: OpFAdd
// O2-COUNT-1: OpFAdd
// O2-NOT: OpFAdd
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%c0] : memref<?xf32>
      %x = arith.addf %a, %a : f32
      %y = arith.addf %a, %a : f32
      %s = arith.mulf %x, %y : f32
      memref.store %s, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
